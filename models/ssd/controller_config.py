"""Configuration of a flash SSD's controller: read-ahead of detected sequential streams, the DRAM
write buffer and the SLC cache.

Units: ns, bytes. The defaults are the flash presets' (:mod:`models.ssd.presets`), each tagged
exact / recalled / estimate / derived with its source; docs/ssd.md explains them layer by layer.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from simcore.config import Model


class ReadAheadConfig(Model):
    """The controller's read-ahead: it watches the reads of its namespace for sequential streams
    (a read that starts where an earlier one ended continues that stream; ``streams`` are tracked at
    once, the oldest slot is reused for a new one), and once a stream has ``trigger_reads``
    contiguous reads it prefetches the next ``window_bytes`` into its DRAM, ``chunk_bytes`` at a
    time, each chunk a media read on one unit, consecutive chunks on consecutive units (a superpage
    is striped a page per die), occupying the unit as a host read does. A read that finds its data
    prefetched is a hit: no media is touched, the controller serves it from DRAM in ``hit_ns``,
    then its data crosses the data path and the link as any read's; a hit that arrives before its
    chunk's media read has finished waits for it. Each hit tops the window up. A write, trim or zone
    action over a prefetched range drops that stream's prefetched data.

    Sources (the flash presets use these defaults): the mechanism and the magnitude, Memblaze
    PBlaze7 7940 4 KiB QD1 sequential reads 56.95 us with read-ahead off, 5.96 us on (exact,
    memblaze.com news 790; "predict the next LBAs, pre-read into the controller buffer"); Intel
    P4500 read latency 10 us sequential vs 85-115 us random (exact, Lenovo P4500 product guide);
    SimpleSSD's ICL prefetches after 3 (+1) contiguous requests, one page from every die (exact,
    SimpleSSD sample.cfg [icl])."""

    streams: int = Field(
        4, ge=1, le=64, description="sequential streams tracked at once per namespace (estimate: 'a few')"
    )
    trigger_reads: int = Field(
        2,
        ge=2,
        le=64,
        description="contiguous reads that make a stream and start its prefetch (estimate: SimpleSSD"
        " waits for 3 + 1 [exact, sample.cfg]; a fio sequential job is detected by its second read)",
    )
    chunk_bytes: int = Field(
        16_384,
        ge=4096,
        le=1 << 24,
        description="one prefetch media read, bytes (a larger stream read prefetches its own size):"
        " a 3D TLC NAND page of 16 KiB (recalled, the reference sheet's rules of thumb)",
    )
    window_bytes: int = Field(
        1 << 20,
        ge=4096,
        le=1 << 30,
        description="how far ahead of a stream's reads the controller keeps its prefetch, bytes"
        " (estimate: about one superpage, a page on every die, as SimpleSSD prefetches: a 1 TB TLC"
        " drive's 16 dies x 4 planes x 16 KiB = 1 MiB)",
    )
    hit_ns: float = Field(
        2_000.0,
        ge=0,
        description="the controller's time to serve a hit from its DRAM, before the data path and"
        " link, ns (derived: Memblaze's 5.96 us QD1 hit [exact] less ~2.5 us of host and ~1.5 us of"
        " PCIe fetch, transfer and posting [estimates])",
    )

    @model_validator(mode="after")
    def _window_holds_a_chunk(self) -> "ReadAheadConfig":
        if self.window_bytes < self.chunk_bytes:
            raise ValueError(
                f"window_bytes={self.window_bytes} is smaller than chunk_bytes={self.chunk_bytes}:"
                " the window holds at least one prefetch read"
            )
        return self


class WriteBufferConfig(Model):
    """The controller's DRAM write buffer: a write is acknowledged once its data is in the buffer
    (after its ``write`` service time), and flushed to the media by programs on the units at the
    write frontier (the FTL places writes on the dies in turn, not by address: MQSim's CWDP page
    allocation, exact): a write's chunks (``program_chunk_bytes``, a NAND page) go to the next units
    in turn, each programming its share
    at ``program_gb_s`` / units, its programs taking at least ``write_cache_program_ns`` in all (the
    device's unit time per random write, from its sustained random-write IOPS). Its bytes stay in the
    buffer until the last program ends. A write that finds the buffer full waits (in doorbell order)
    until flushes have freed room for it: back-pressure, its latency includes the wait.

    Sources: MQSim acknowledges a write once it is in DRAM and holds back host writes when the
    write-back in flight reaches one page per plane (channels x chips x dies x planes x page,
    exact: SSD_Device.cpp:339, Data_Cache_Manager_Flash_Advanced.cpp:280-282); the presets' buffer
    is that rule on TLC geometry, a 16 KiB page on 4 planes per media unit = 64 KiB per unit, doubled
    so a die gathers its next multi-plane program while one is in flight: 128 KiB per die (estimate:
    16 KiB pages, 4 planes per die are the 3D TLC rules of thumb [recalled])."""

    size_bytes: int = Field(
        ge=4096,
        le=1 << 40,
        description="bytes of host writes the buffer holds before their programs end (the presets: media"
        " units x 128 KiB, an estimate after MQSim's one page per plane in flight, doubled)",
    )
    program_gb_s: float = Field(
        gt=0,
        description="the media's program rate over all units, GB/s (1e9 B/s): the datasheet's sequential"
        " write rate (with an SLC cache: its rate inside the cache)",
    )
    program_chunk_bytes: int = Field(
        16_384,
        ge=512,
        le=1 << 24,
        description="the bytes of a write one unit of the frontier programs: a write of n bytes goes to"
        " ceil(n / this) units in turn, bytes (a 3D TLC NAND page of 16 KiB, recalled)",
    )


class SlcCacheConfig(Model):
    """The SLC cache (pSLC: TLC blocks programmed one bit per cell): host writes are programmed at the
    SLC rate (the write buffer's ``program_gb_s``) until ``size_bytes`` have gone into it, then at the
    native (TLC) rate, ``native_write_gb_s`` over all the units: a sustained write meets a cliff once
    the cache is used. ``initial_used_bytes`` starts the run with part of the
    cache already used (a drive just after a long write). Not modelled: the cache's refill (folding
    to TLC) while the drive idles, the slower writes while it folds, the cache shrinking as the
    drive fills; every run starts from ``initial_used_bytes`` and only fills the cache.

    Sources: the 980 PRO 1 TB, 42 GB of TurboWrite cache (6 GB static + 36 GB dynamic), 2,000 MB/s
    sequential writes after it (Samsung's figures, exact: notebookcheck.com 490845, hardwareluxx)."""

    size_bytes: int = Field(gt=0, le=1 << 50, description="host bytes written at the SLC rate before the cliff, bytes")
    native_write_gb_s: float = Field(
        gt=0,
        description="the media's program rate once the cache is used, over all its units, GB/s (1e9 B/s):"
        " the sustained sequential write rate after the cliff",
    )
    initial_used_bytes: int = Field(
        0, ge=0, description="cache bytes already used when the run starts (0: a fresh, idle drive)"
    )

    @model_validator(mode="after")
    def _used_fits(self) -> "SlcCacheConfig":
        if self.initial_used_bytes > self.size_bytes:
            raise ValueError(
                f"initial_used_bytes={self.initial_used_bytes} exceeds size_bytes={self.size_bytes}:"
                " at most the whole cache is used"
            )
        return self
