"""User-space costs that the kernel's settings carry: fio's SPDK engine (SPDK's user-space NVMe
driver), fio's verify and NVMe protection information.

Each class is a group of :class:`~models.os.costs.tables.KernelCosts`' fields (a platform's
``kernel`` settings), each field's default sourced in its description; KernelCosts combines the
groups as its base classes in the order of its fields (tests/test_kernel_costs_order.py).
"""

from __future__ import annotations

from pydantic import Field, field_validator

from simcore.config import Model


class SpdkCosts(Model):
    """fio's SPDK engine: SPDK's user-space NVMe driver in fio's thread, and a user-space doorbell."""

    # -- fio's SPDK engine (models/ioengines/spdk.py): SPDK's user-space NVMe driver in fio's thread.
    # SPDK reports 10.39M 4 KiB reads per second from one thread of its perf tool (spdk.io news,
    # 2019-05-06, "10.39M Storage I/O Per Second From One Thread", Xeon Platinum 8280): ~260-390
    # cycles per IO at 2.7-4.0 GHz for the whole loop (submit, completion, the tool's own work, doorbells
    # batched). The split below is an estimate within that total.
    spdk_submit_cycles: float = Field(
        180,
        ge=0,
        description="the plugin's queue() (spdk_fio_queue -> spdk_nvme_ns_cmd_read/write): a request"
        " and a tracker from the qpair's free lists, the command, its PRP from the buffer fio allocated in"
        " registered hugepage memory (spdk_vtophys), the 64-byte SQ entry; not the doorbell (estimate,"
        " within SPDK's ~10M IOPS per core)",
    )
    spdk_complete_cycles: float = Field(
        120,
        ge=0,
        description="one completion in spdk_nvme_qpair_process_completions: the CQE (its phase bit"
        " flipped), its tracker, the request's callback (spdk_fio_completion_cb hands the io_u to fio's"
        " event list), the request freed (estimate, within SPDK's ~10M IOPS per core)",
    )
    spdk_qpair_poll_cycles: float = Field(
        16,
        ge=0,
        description="spdk_nvme_qpair_process_completions on a qpair with nothing posted: the phase"
        " bit of its CQ head entry, a cached line while the device has not written it (estimate, the"
        " storage-server model's qpair_poll_cycles)",
    )
    spdk_getevents_cycles: float = Field(
        40,
        ge=0,
        description="one call of the plugin's getevents (spdk_fio_getevents): its loop set-up and the"
        " qpair rotation (estimate)",
    )
    mmio_write_cycles: float = Field(
        100,
        ge=0,
        description="core time of one write to a device register through a user-space mapping of"
        " its BAR (an NVMe SQ tail or CQ head doorbell): an uncached store that drains the store buffer"
        " before it and is posted on PCIe (estimate, a physical parameter of the platform; the kernel's"
        " doorbells are inside nvme_submit_cycles and nvme_complete_cycles)",
    )


class VerifyPiCosts(Model):
    """fio's verify (checksums, buffer fills, headers, the hand-off to verify_async threads), NVMe
    protection information's guards and tuples, and the sync and cache invalidation before a verify
    phase."""

    # -- fio's verify (models/ioengines/verify.py): fio's own user-space work on the data of an IO. The
    # rates are for fio's implementations (fio's crc/ directory: plain C, except crc32c's SSE4.2
    # instruction), per byte on a warm core, the data in the cache hierarchy after its DMA.
    verify_checksum_cycles_per_byte: dict[str, float] = Field(
        {
            "crc32c": 0.375,
            "crc32c-intel": 0.375,
            "crc64": 7.0,
            "crc32": 7.0,
            "crc16": 7.0,
            "crc7": 7.0,
            "xxhash": 0.5,
            "md5": 6.0,
            "sha1": 6.0,
            "sha256": 20.0,
            "sha512": 13.0,
            "sha3-224": 11.8,
            "sha3-256": 12.5,
            "sha3-384": 16.3,
            "sha3-512": 23.6,
            "pattern": 0.1,
            "pattern_hdr": 0.1,
            "meta": 0.0,
            "null": 0.0,
        },
        description="fio verify=TYPE: cycles per byte to compute (writes) or check (reads) the block's"
        " checksum. crc32c: fio's crc32c-intel.c runs the SSE4.2 crc32q instruction over 8 bytes at a time"
        " in one dependency chain, latency 3 cycles (Agner Fog's instruction tables, Skylake to Zen) -> 3/8"
        " (derived; ~9 GB/s at 3.4 GHz). crc64, crc32, crc16, crc7: byte-at-a-time table look-ups"
        " (Sarwate), ~7 cycles per byte (recalled: Kounavis and Berry, 'A Systematic Approach to Building"
        " High Performance Software-based CRC Generators', ISCC 2005). xxhash: XXH32, 5.4 GB/s at 2.7 GHz"
        " (recalled: the xxHash README's benchmark) -> 0.5. md5 (plain C of RFC 1321, 64 steps per 64-byte"
        " block), sha1, sha256, sha512: estimates from the rounds per block of plain C (~0.55 GB/s for md5"
        " at 3.4 GHz). sha3-*: one Keccak-f[1600] permutation (estimate ~1,700 cycles in C) per rate of"
        " 144/136/104/72 bytes. pattern, pattern_hdr: a compare with the pattern, memcmp-like (estimate)."
        " meta, null: no checksum of the data (the header only)",
    )
    verify_fill_cycles_per_byte: float = Field(
        0.6,
        ge=0,
        description="fio with verify refills each write buffer with new random data (fill_random_buf:"
        " one 64-bit multiplicative hash step, __hash_u64, and a store per 8 bytes in one dependency"
        " chain: ~5 cycles per 8 bytes; estimate); with verify_pattern the pattern is copied instead"
        " (verify_pattern_fill_cycles_per_byte)",
    )
    verify_pattern_fill_cycles_per_byte: float = Field(
        0.1, ge=0, description="fio copying verify_pattern into a write buffer: memcpy-like (estimate)"
    )
    verify_header_cycles: float = Field(
        150,
        ge=0,
        description="fio's verify header of each verify_interval of a block (struct verify_header: magic,"
        " length, offset, write sequence, time, seed, its own crc32c): built on a write, checked on a"
        " read (estimate: ~40 fields and a crc32c over 40 bytes)",
    )
    verify_async_queue_cycles: float = Field(
        1500,
        ge=0,
        description="fio's hand-off of a completed read to its verify_async threads (verify.c"
        " verify_async_init's list: the io_u put on td->verify_list under verify_lock, then"
        " pthread_cond_signal, a futex wake system call when a thread waits): charged to the job"
        " thread (estimate, ~0.4 us: a lock, a list add and a futex(FUTEX_WAKE) round trip)",
    )
    pi_crc16_cycles_per_byte: float = Field(
        7.0,
        ge=0,
        description="fio generating or checking an NVMe protection information guard of 16 bits"
        " (io_uring_cmd, pi_act=0, pi_chk with GUARD): fio_crc_t10dif, cycles per byte. Without ISA-L"
        " (Debian's fio package does not link it) fio's crc/crct10dif_common.c runs a byte-at-a-time"
        " table look-up (Sarwate), ~7 cycles per byte as verify's crc16 (recalled: Kounavis and Berry,"
        " ISCC 2005); with ISA-L's folding CRC it would be ~0.1",
    )
    pi_crc64_cycles_per_byte: float = Field(
        7.0,
        ge=0,
        description="the same for a 64-bit guard: fio_crc64_nvme, without ISA-L a byte-at-a-time table"
        " look-up over crc64nvmetable (crc/crc64.c), ~7 cycles per byte (as above)",
    )
    pi_tuple_cycles: float = Field(
        30,
        ge=0,
        description="fio's work per block's protection information tuple besides the guard's CRC: the"
        " application and reference tags stored (a write) or compared with the escapes and masks (a"
        " read), big-endian swaps, the next block's pointers (estimate: ~10 loads, stores and branches)",
    )
    fsync_clean_cycles: float = Field(
        1500,
        ge=0,
        description="fsync(2) of a file with no dirty pages, after the syscall entry (vfs_fsync_range ->"
        " blkdev_fsync or the file system's fsync: the mapping's write-and-wait finds nothing, and"
        " blkdev_issue_flush's empty flush bio ends at once on a queue without a volatile write cache,"
        " as submit_bio_noacct clears REQ_PREFLUSH there): fio's sync before its verify phase (estimate)",
    )
    invalidate_cache_cycles: float = Field(
        1500,
        ge=0,
        description="fio's file_invalidate_cache on a file with nothing cached, after the syscall entry:"
        " ioctl(BLKFLSBUF) on a block device (sync_blockdev + invalidate_bdev) or"
        " posix_fadvise(POSIX_FADV_DONTNEED) on a file (invalidate_mapping_pages over an empty mapping)"
        " (estimate)",
    )

    @field_validator("verify_checksum_cycles_per_byte")
    @classmethod
    def _known_checksums(cls, v: dict):
        """Every fio verify type keeps a rate: a partial table overrides only the types it names."""
        defaults = cls.model_fields["verify_checksum_cycles_per_byte"].default
        for name, rate in v.items():
            if name not in defaults:
                raise ValueError(f"unknown fio verify type {name!r} (known: {', '.join(defaults)})")
            if not (0.0 <= rate < float("inf")):
                raise ValueError(f"{name}: cycles per byte must be >= 0, got {rate}")
        return {**defaults, **v}
