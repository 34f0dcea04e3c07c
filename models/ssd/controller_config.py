"""Configuration of a flash SSD's controller: read-ahead of detected sequential streams.

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
