"""``kernel/locking``: spinlocks, their waiters and the cache-line hand-offs between CPUs."""
