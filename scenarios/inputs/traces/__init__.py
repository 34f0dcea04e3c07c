"""Block-trace readers: Alibaba, Tencent, MSR Cambridge, blkparse text and fio iologs.

Example::

    reader = open_trace("scenarios/data/traces/msr_sample.csv")   # format sniffed
    ios = list(select(reader, window_ns=(0, 10**9), speed=2.0))      # first second, 2x faster
    print(reader.describe())                                          # what was read and skipped

Every reader streams (plain or gzip files) and yields :class:`TraceIO` records (ns, bytes).
See :mod:`.csvformats`, :mod:`.blkparse` and :mod:`.iolog` for each format's columns and skip
reasons, :mod:`.reader` for out-of-order timestamps, and :mod:`scenarios.data.traces.make_samples`
for the samples. :mod:`.timed` reads traces with measured per-IO latencies (``validate --trace``;
sample by :mod:`scenarios.data.traces.make_timed_sample`).
"""

from .reader import FORMATS, TraceReader, open_trace, sniff_format
from .record import TraceIO
from .select import map_volume_batches, map_volumes, parse_window, read_until, select

__all__ = [
    "FORMATS",
    "TraceIO",
    "TraceReader",
    "open_trace",
    "sniff_format",
    "select",
    "map_volumes",
    "map_volume_batches",
    "read_until",
    "parse_window",
]
