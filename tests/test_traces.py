"""Tests for scenarios.inputs.traces: block-trace readers, sniffing, selection, volume mapping, samples."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scenarios.data.traces import make_samples
from scenarios.inputs.traces import FORMATS, TraceIO, map_volumes, open_trace, select, sniff_format
from simcore.errors import ConfigError

SAMPLES = Path(make_samples.__file__).parent
MSR = SAMPLES / "msr_sample.csv"
ALIBABA = SAMPLES / "alibaba_sample.csv"

TENCENT = """\
1538323200,2048,8,0,1063
1538323200,4096,16,1,1063
1538323201,0,8,1,7
"""

BLKPARSE = """\
  8,32   7        1     0.000000000  2923  Q   R 272208 + 2 [fio]
  8,32   7        2     0.000001500  2923  G   R 272208 + 2 [fio]
  8,32   7        3     0.000002000  2923  D   R 272208 + 2 [fio]
  8,32   7        4     0.000010000  2923  Q  WS 1000 + 8 [fio]
  8,32   7        5     0.000011000  2923  Q  FN [jbd2]
  8,32   7        6     0.000012000  2923  Q  DS 5000 + 8 [fstrim]
  8,32   7        7     0.000020000  2923  D  WS 1000 + 8 [fio]
  8,32   7        8     0.000090000     0  C   R 272208 + 2 [0]
  8,32   7        0     0.000091000     0  m   N cfq2923 alloced
  8,48   2        1     0.000100000  2924  Q   R 64 + 256 [dd]
CPU7 (8,32):
 Reads Queued:           1,        1KiB\t Writes Queued:           1,        4KiB
 Read Dispatches:        1,        1KiB\t Write Dispatches:        1,        4KiB
Total (8,32):
 Reads Queued:           1,        1KiB\t Writes Queued:           1,        4KiB

Throughput (R/W): 11KiB/s / 44KiB/s
Events (8,32): 9 entries
Skips: 0 forward (0 -   0.0%)
"""

IOLOG2 = """\
fio version 2 iolog
/dev/nvme0n1 add
/dev/nvme0n1 open
/dev/nvme0n1 read 0 4096
/dev/nvme0n1 wait 100 0
/dev/nvme0n1 write 4096 8192
/dev/nvme0n1 wait 1500 0
/dev/nvme0n1 sync 0 0
/dev/nvme0n1 trim 0 4096
/dev/nvme0n1 read 8192 4096
/dev/nvme0n1 close
"""

IOLOG3 = """\
fio version 3 iolog
0 /dev/nvme0n1 add
0 /dev/nvme0n1 open
2 /dev/nvme0n1 read 0 4096
5 /dev/nvme0n1 write 4096 512
7.5 /dev/nvme0n1 datasync 0 0
9 /dev/nvme0n1 close
"""


def write(tmp_path: Path, body: str, name: str = "t.trace") -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


def read_all(path, fmt=None, **kw):
    reader = open_trace(path, fmt, **kw)
    return reader, list(reader)


def error(path, fmt=None, **kw) -> str:
    with pytest.raises(ConfigError) as exc:
        list(open_trace(path, fmt, **kw))
    return str(exc.value)


# --- the samples ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "path, fmt, volumes", [(MSR, "msr", {"hm_0", "hm_1", "src1_2"}), (ALIBABA, "alibaba", {"12", "419", "733"})]
)
def test_sample_reads(path, fmt, volumes):
    reader, ios = read_all(path)
    assert reader.format == fmt and reader.path == path
    assert len(ios) == reader.records == reader.lines_read == 300
    assert reader.bad_lines == 0 and reader.skipped == {} and reader.out_of_order == 0
    assert ios[0].t_ns == 0 and [r.line for r in ios] == list(range(1, 301))
    assert all(a.t_ns <= b.t_ns for a, b in zip(ios, ios[1:]))
    assert {r.volume for r in ios} == volumes
    reads = sum(r.op == "read" for r in ios)
    assert 0.25 < reads / len(ios) < 0.45
    assert all(4096 <= r.nbytes <= 65536 and r.nbytes % 512 == 0 for r in ios)
    assert fmt in reader.describe() and "300 IOs" in reader.describe()


def test_msr_units():
    first = MSR.read_text().splitlines()[:2]
    t0, t1 = (int(line.split(",")[0]) for line in first)
    ios = list(open_trace(MSR))
    assert ios[1].t_ns == (t1 - t0) * 100  # FILETIME ticks are 100 ns
    f = first[0].split(",")
    assert (ios[0].offset, ios[0].nbytes, ios[0].volume) == (int(f[4]), int(f[5]), f"{f[1]}_{f[2]}")


def test_samples_regenerate_byte_identical(tmp_path):
    for path in make_samples.write_samples(tmp_path):
        assert path.read_bytes() == (SAMPLES / path.name).read_bytes(), path.name
    out = tmp_path / "cli"
    subprocess.run(
        [sys.executable, "-m", "scenarios.data.traces.make_samples", str(out)],
        check=True,
        capture_output=True,
        cwd=Path(__file__).parents[1],
    )
    assert (out / "msr_sample.csv").read_bytes() == MSR.read_bytes()


# --- the other formats ----------------------------------------------------------------------------
def test_tencent_units(tmp_path):
    reader, ios = read_all(write(tmp_path, TENCENT))
    assert reader.format == "tencent"
    assert ios == [
        TraceIO(0, "read", 2048 * 512, 8 * 512, "1063", 1),
        TraceIO(0, "write", 4096 * 512, 16 * 512, "1063", 2),
        TraceIO(10**9, "write", 0, 4096, "7", 3),
    ]


def test_alibaba_inline_with_header(tmp_path):
    body = (
        "device_id,opcode,offset,length,timestamp\n419,W,8207360,4096,1577808000000029\n419,R,0,512,1577808000000129\n"
    )
    reader, ios = read_all(write(tmp_path, body))
    assert reader.format == "alibaba"
    assert ios == [TraceIO(0, "write", 8207360, 4096, "419", 2), TraceIO(100_000, "read", 0, 512, "419", 3)]


def test_blkparse_queue_events(tmp_path):
    reader, ios = read_all(write(tmp_path, BLKPARSE))
    assert reader.format == "blkparse"
    assert ios == [
        TraceIO(0, "read", 272208 * 512, 1024, "8,32", 1),
        TraceIO(10_000, "write", 1000 * 512, 4096, "8,32", 4),
        TraceIO(100_000, "read", 64 * 512, 256 * 512, "8,48", 10),
    ]
    assert reader.skipped == {
        "action G": 1,
        "action D": 2,
        "action C": 1,
        "action m": 1,
        "no data (RWBS FN)": 1,
        "discard": 1,
    }


def test_blkparse_dispatch_events(tmp_path):
    reader, ios = read_all(write(tmp_path, BLKPARSE), blk_action="D")
    assert [(r.t_ns, r.op, r.line) for r in ios] == [(0, "read", 3), (18_000, "write", 7)]
    assert reader.skipped["action Q"] == 5


def test_blkparse_bad_action_and_garbage(tmp_path):
    with pytest.raises(ConfigError, match="blk_action"):
        open_trace(write(tmp_path, BLKPARSE), blk_action="C")
    path = write(tmp_path, BLKPARSE.replace("  8,32   7        4", "garbage here", 1))
    assert error(path, "blkparse").startswith(f"{path}:4: blkparse: not a blkparse event line")


def test_iolog_v2_waits(tmp_path):
    reader, ios = read_all(write(tmp_path, IOLOG2))
    assert reader.format == "iolog"
    assert ios == [
        TraceIO(0, "read", 0, 4096, "/dev/nvme0n1", 4),
        TraceIO(100_000, "write", 4096, 8192, "/dev/nvme0n1", 6),
        TraceIO(1_600_000, "read", 8192, 4096, "/dev/nvme0n1", 10),
    ]
    assert reader.skipped == {"file add/open/close": 3, "sync": 1, "trim": 1}


def test_iolog_v3_timestamps_ms(tmp_path):
    reader, ios = read_all(write(tmp_path, IOLOG3))
    assert [(r.t_ns, r.op, r.nbytes) for r in ios] == [(0, "read", 4096), (3_000_000, "write", 512)]
    assert reader.skipped == {"file add/open/close": 3, "sync": 1}


def test_iolog_errors(tmp_path):
    path = write(tmp_path, IOLOG3 + "10 /dev/nvme0n1 wait 100 0\n")
    assert error(path) == f"{path}:8: iolog: 'wait' is not allowed in iolog v3 (timestamps give the time)"
    path = write(tmp_path, IOLOG2.replace("read 8192", "frob 8192"))
    assert error(path).startswith(f"{path}:10: iolog: unknown action 'frob'")
    path = write(tmp_path, "/dev/sda read 0 4096\n")
    msg = error(path, "iolog", skip_bad_lines=True)  # a missing header is fatal even when skipping
    assert msg.startswith(f"{path}:1: iolog: not a fio iolog")


# --- malformed lines ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fmt, good, bad, what",
    [
        ("alibaba", "1,R,0,4096,100", "1,R,0,4096", "expected 5 comma-separated columns"),
        ("alibaba", "1,R,0,4096,100", "1,X,0,4096,100", "unknown opcode 'X'"),
        ("alibaba", "1,R,0,4096,100", "1,R,0,-4096,100", "length -4096 is negative"),
        ("alibaba", "1,R,0,4096,100", "1,R,abc,4096,100", "offset 'abc' is not an integer"),
        ("tencent", "10,0,8,0,3", "10,0,8,2,3", "unknown io_type '2'"),
        ("tencent", "10,0,8,0,3", "1x,0,8,0,3", "timestamp '1x' is not a number"),
        (
            "msr",
            "128166372003061629,hm,0,Write,7014912,4096,26",
            "128166372003061629,hm,0,Erase,7014912,4096,26",
            "unknown type 'Erase'",
        ),
        (
            "msr",
            "128166372003061629,hm,0,Write,7014912,4096,26",
            "128166372003061629,hm,0,Write,7014912,-1,26",
            "size -1 is negative",
        ),
        (
            "blkparse",
            "  8,0  1  1  0.000000001  7  Q  R 8 + 8 [x]",
            "  8,0  1  2  0.1  7  Q  R [x]",
            "expected 'sector + sectors'",
        ),
    ],
)
def test_bad_line_names_file_and_line(tmp_path, fmt, good, bad, what):
    path = write(tmp_path, f"{good}\n{bad}\n{good}\n")
    msg = error(path, fmt)
    assert msg.startswith(f"{path}:2: {fmt}: ") and what in msg
    reader, ios = read_all(path, fmt, skip_bad_lines=True)
    assert reader.bad_lines == 1 and [r.line for r in ios] == [1, 3]


def test_streaming_reads_lazily(tmp_path):
    """The first records come out before a bad line far below is reached."""
    body = MSR.read_text() + "not,a,valid,line\n"
    path = write(tmp_path, body)
    it = iter(open_trace(path, "msr"))
    assert next(it).line == 1
    with pytest.raises(ConfigError, match=rf"{path.name}:301: msr: expected 7"):
        list(it)


def test_zero_length_is_counted_not_dropped(tmp_path):
    reader, ios = read_all(write(tmp_path, "1,R,0,4096,100\n1,W,0,0,200\n"), "alibaba")
    assert len(ios) == 1 and reader.skipped == {"zero length": 1}


def test_out_of_order_kept_and_counted(tmp_path):
    reader, ios = read_all(write(tmp_path, "1,R,0,512,5000\n1,R,0,512,1000\n1,R,0,512,6000\n"))
    assert [r.t_ns for r in ios] == [0, -4_000_000, 1_000_000]
    assert reader.out_of_order == 1 and reader.max_backstep_ns == 4_000_000
    assert "1 out of order" in reader.describe()


# --- sniffing, files ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "body, fmt",
    [
        (TENCENT, "tencent"),
        (BLKPARSE, "blkparse"),
        (IOLOG2, "iolog"),
        (IOLOG3, "iolog"),
        ("\n\n128166372003061629,hm,0,Write,7014912,4096,26\n", "msr"),
        ("419,W,8207360,4096,1577808000000029\n", "alibaba"),
    ],
)
def test_sniff(tmp_path, body, fmt):
    assert sniff_format(write(tmp_path, body)) == fmt
    assert fmt in FORMATS


def test_sniff_unknown_and_empty(tmp_path):
    path = write(tmp_path, "hello world\nthis is not a trace\n")
    with pytest.raises(ConfigError, match=r"t.trace:1: cannot tell the trace format.*alibaba"):
        sniff_format(path)
    with pytest.raises(ConfigError, match="empty trace"):
        sniff_format(write(tmp_path, "\n\n", "empty"))


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(ConfigError, match="nope.csv: cannot open trace"):
        open_trace(tmp_path / "nope.csv")
    with pytest.raises(ConfigError, match="nope.csv: trace file not found"):
        open_trace(tmp_path / "nope.csv", "msr")
    with pytest.raises(ConfigError, match="unknown trace format 'spc'"):
        open_trace(MSR, "spc")


def test_gzip_transparent(tmp_path):
    gz = tmp_path / "msr.csv.gz"
    gz.write_bytes(gzip.compress(MSR.read_bytes()))
    reader, ios = read_all(gz)
    assert reader.format == "msr" and ios == list(open_trace(MSR))
    broken = tmp_path / "broken.gz"
    broken.write_bytes(gzip.compress(MSR.read_bytes())[:2000])
    assert "cannot read trace" in error(broken, "msr")


# --- select and map_volumes -----------------------------------------------------------------------
def recs(times, volumes=None):
    volumes = volumes or ["a"] * len(times)
    return [TraceIO(t, "read", 0, 4096, v, i + 1) for i, (t, v) in enumerate(zip(times, volumes))]


def test_select_window_speed_volumes():
    rs = recs([0, 100, 200, 300, 400], ["a", "b", "a", "a", "b"])
    counts: dict[str, int] = {}
    out = list(select(rs, window_ns=(100, 400), volumes={"a"}, speed=2.0, counts=counts))
    assert [(r.t_ns, r.line) for r in out] == [(50, 3), (100, 4)]
    assert counts == {"before window": 1, "after window": 1, "volume": 1}
    assert list(select(rs)) == rs
    assert [r.t_ns for r in select(rs, speed=0.5)] == [0, 200, 400, 600, 800]
    assert [r.line for r in select(iter(rs), window_ns=(None, 250), assume_sorted=True)] == [1, 2, 3]


@pytest.mark.parametrize(
    "kw, msg",
    [
        ({"speed": 0}, "speed"),
        ({"speed": float("nan")}, "speed"),
        ({"window_ns": (5, 1)}, "before start"),
        ({"window_ns": (1.5, None)}, "integer"),
        ({"window_ns": 5}, "pair"),
        ({"volumes": "hm_0"}, "string"),
    ],
)
def test_select_rejects_bad_arguments(kw, msg):
    with pytest.raises(ConfigError, match=msg):
        list(select(recs([0]), **kw))


@given(
    st.lists(st.integers(0, 10**12), max_size=60), st.integers(0, 10**12), st.integers(0, 10**12), st.floats(0.01, 100)
)
def test_select_keeps_order_and_count_in_window(times, a, b, speed):
    start, end = min(a, b), max(a, b)
    rs = recs(times)
    out = list(select(rs, window_ns=(start, end), speed=speed))
    inside = [r for r in rs if start <= r.t_ns < end]
    assert [r.line for r in out] == [r.line for r in inside]
    assert all(r.t_ns == round((i.t_ns - start) / speed) for r, i in zip(out, inside))
    assert all(r.t_ns >= 0 for r in out)


def test_map_volumes_round_robin_in_order_of_first_appearance():
    rs = recs(range(7), ["x", "y", "x", "z", "w", "y", "v"])
    assert [d for _, d in map_volumes(rs, 3)] == [0, 1, 0, 2, 0, 1, 1]
    assert [d for _, d in map_volumes(rs, 1)] == [0] * 7
    ios = list(open_trace(MSR))
    first = dict(map_volumes(ios, 2))  # stable: every record of a volume goes to one device
    pairs = {(r.volume, d) for r, d in map_volumes(ios, 2)}
    assert len(pairs) == 3 and len(first) == 300
    with pytest.raises(ConfigError, match="n_devices"):
        list(map_volumes(rs, 0))


def test_crlf_line_endings(tmp_path):
    path = tmp_path / "crlf.csv"
    path.write_bytes(b"419,W,8207360,4096,1577808000000029\r\n419,R,0,512,1577808000000129\r\n")
    assert [(r.op, r.volume, r.t_ns) for r in open_trace(path)] == [("write", "419", 0), ("read", "419", 100_000)]
    blk = tmp_path / "blk.txt"
    blk.write_bytes(BLKPARSE.replace("\n", "\r\n").encode())
    assert len(list(open_trace(blk))) == 3


@given(
    fields=st.lists(
        st.one_of(
            st.integers(0, 10**45).map(str),
            st.just(""),
            st.just("-1"),
            st.just("00012"),
            st.sampled_from(["\u0663", "\u00b2", "1\u00b2", "12a", " 7"]),
        ),
        min_size=5,
        max_size=5,
    ),
    op=st.sampled_from(["Read", "write", "Trim"]),
)
def test_msr_fast_path_agrees_with_the_checked_path(fields, op):
    """MsrParser takes plain-digit lines at once: whatever the fields, it answers as the checked
    path (to_int on each number) does, the same record or the same refusal."""
    from scenarios.inputs.traces.csvformats import MsrParser
    from scenarios.inputs.traces.record import BadLine

    row = [f.strip() for f in fields]
    row = [row[0], "hm", row[1], op, row[2], row[3], row[4]]

    def outcome(fn):
        try:
            return fn(row)
        except BadLine as e:
            return f"BadLine: {e}"

    assert outcome(MsrParser().record) == outcome(MsrParser().checked_record)


def test_msr_chunks_read_as_line_by_line(tmp_path):
    """MSR lines are read a chunk at a time when every line of the chunk is a usual one
    (csvformats.msr_columns): the records and every counter are the parser's, line by line, and a
    chunk with one unusual line (lower-case type, blanks, a zero size, a bad line, an offset out of
    range, leading zeros, out-of-order times, a long hostname) is read line by line."""
    from scenarios.inputs.traces.csvformats import MsrParser
    from scenarios.inputs.traces.reader import CHUNK_LINES, out_of_range
    from scenarios.inputs.traces.record import BadLine

    base = 128166372000000000
    lines = ["Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"]
    for i in range(2 * CHUNK_LINES + 500):
        t = base + i * 37 - (50 if i % 1000 == 999 else 0)
        host = "a-very-long-hostname-of-a-server" if i % 7 == 0 else "hm"
        lines.append(f"{t},{host},{i % 3:03d},{'Read' if i % 2 else 'Write'},{i * 4096},{4096 * (i % 5)},{i % 90}")
    odd = {
        CHUNK_LINES + 10: "{t},hm,1,read,0,4096,10",
        CHUNK_LINES + 20: "{t}, hm ,1,Read,0,4096,10",
        CHUNK_LINES + 30: "not,a,line",
        CHUNK_LINES + 40: "{t},hm,1,Read,9223372036854775807,4096,10",
        CHUNK_LINES + 50: "",
    }
    for k, text in odd.items():
        lines[k] = text.format(t=base + k * 37)
    path = tmp_path / "chunks.csv"
    path.write_text("\n".join(lines) + "\n")
    reader = open_trace(path, "msr", skip_bad_lines=True)
    got = [(r.t_ns, r.op, r.offset, r.nbytes, r.volume, r.line) for r in reader]

    parser, want, skipped, bad, t0, prev, back, worst = MsrParser(), [], {}, 0, None, None, 0, 0
    for lineno, text in enumerate(lines, 1):
        try:
            out = parser.parse(text + "\n", lineno)
        except BadLine:
            bad += 1
            continue
        if isinstance(out, str):
            skipped[out] = skipped.get(out, 0) + 1
        elif out is not None:
            t, op, off, n, vol = out
            if out_of_range(off, n, 0 if t0 is None else t - t0):
                bad += 1
                continue
            t0 = t if t0 is None else t0
            if prev is not None and t < prev:
                back, worst = back + 1, max(worst, prev - t)
            prev = t
            want.append((t - t0, op, off, n, vol, lineno))
    assert got == want and len(got) > 2 * CHUNK_LINES - 2000
    assert (reader.lines_read, reader.records, reader.bad_lines, reader.skipped) == (
        len(lines),
        len(want),
        bad,
        skipped,
    )
    assert (reader.out_of_order, reader.max_backstep_ns) == (back, worst) and back > 0 and skipped["zero length"] > 0
    # the replayer's feed, a block of lines at a time: the same records and counters
    batched = [(r.t_ns, r.op, r.offset, r.nbytes, r.volume, r.line) for b in reader.batches() for r in b]
    assert batched == want
    assert (reader.lines_read, reader.records, reader.bad_lines, reader.skipped) == (
        len(lines),
        len(want),
        bad,
        skipped,
    )
    assert (reader.out_of_order, reader.max_backstep_ns) == (back, worst)


_MSR_FIELD = st.one_of(
    st.integers(0, 10**20).map(str),
    st.integers(0, 10**18 - 1).map(str),
    st.just(""),
    st.just("-1"),
    st.just("00012"),
    st.sampled_from(["\u0663", "\u00b2", "1\u00b2", "12a", " 7", "7\r", "1.0", "+5", "1_0"]),
)
_MSR_LINE = st.tuples(
    st.lists(_MSR_FIELD, min_size=5, max_size=5),
    st.sampled_from(
        ["hm", "", "h m", "h\u00a0m", "src1 ", "\u00e9t\u00e9", "proj\t", "a-very-long-hostname-of-a-server"]
    ),
    st.sampled_from(["Read", "Write", "write", "Trim", "Read ", "Writ", "Reads"]),
    st.sampled_from(["\n", "\n", "\n", "\r\n", "", "\r"]),
)


@given(rows=st.lists(_MSR_LINE, min_size=1, max_size=6), usual=st.integers(0, 40))
def test_msr_columns_take_only_what_the_parser_reads_the_same(rows, usual):
    """msr_columns (the reader's chunks) takes lines only when the parser, line by line, reads the
    same records from them: whatever the fields, either it refuses the chunk or every line's values
    are the parser's (the lines as the text reader gives them: a newline only at the end)."""
    from scenarios.inputs.traces.csvformats import MsrParser, msr_columns

    lines = [f"{t},{host},{disk},{op},{off},{size},{resp}{end}" for (t, disk, off, size, resp), host, op, end in rows]
    lines += [f"{128166372000000000 + i},hm,{i % 3},Read,{i * 4096},4096,1\n" for i in range(usual)]
    cols = msr_columns(lines)
    if cols is None:
        return
    parser = MsrParser()
    parser._first = False
    ticks, writes, offsets, sizes, vol, keys = cols
    for i, line in enumerate(lines):
        host, disk = keys[vol[i]]
        record = (
            int(ticks[i]) * 100,
            "write" if writes[i] else "read",
            int(offsets[i]),
            int(sizes[i]),
            f"{host}_{disk}",
        )
        assert parser.parse(line, 1) == ("zero length" if sizes[i] == 0 else record)
        assert line.endswith("\n") and not line.endswith("\r\n")
