"""``block/``: blk-mq (``blk-mq.c``: tags, plugging, dispatch, the hardware contexts), the elevator
interface the IO schedulers plug into (``elevator.c``), kblockd's run-queue work, requests and their
flags, the per-device queue settings (``/sys/block/<dev>/queue``), the CPU-to-queue maps
(``blk-mq-cpumap.c``), the completion rule (interrupt, polled, hybrid), the zone report
(``blk-zoned.c``) and the ledger of completed IOs."""
