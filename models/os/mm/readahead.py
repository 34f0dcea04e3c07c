"""The kernel's on-demand readahead (mm/readahead.c, v6.x): the per-open-file window
(``struct file_ra_state``) and the decision a buffered read takes on a cache miss (the
synchronous case, ``page_cache_sync_ra``) or when it reaches the page that carries the
PG_readahead marker (the asynchronous case, ``page_cache_async_ra``).

All sizes are in 4 KiB pages, as in the kernel. The functions are the kernel's:

- ``get_init_ra_size(size, max)``: ``roundup_pow_of_two(size)``, x4 when that is at most max/32,
  x2 when at most max/4, else ``max``;
- ``get_next_ra_size(ra, max)``: x4 below max/16, x2 up to max/2, else ``max``;
- ``ondemand_readahead``: at index 0 an initial window; at the expected index (the marker page,
  ``start + size - async_size``, or the window's end) the window is pushed forward
  (``start += size``, ``size = get_next_ra_size``, ``async_size = size``); a hit on a marker
  without matching state ramps up from the cached pages ahead (``page_cache_next_miss``); a request
  larger than the window, or one sequential to ``prev_pos``, starts an initial window; anything
  else is a random read: only the requested pages, no marker. At ``readit:`` a window read at
  its own start whose size equals its async size is doubled once (``size += get_next_ra_size``,
  or ``size = max, async_size = max/2`` if that would pass max).
- The marker (PG_readahead) goes on page ``start + size - async_size`` (``page_cache_ra_unbounded``:
  ``if (i == nr_to_read - lookahead_size) folio_set_readahead``).
- FMODE_RANDOM (``POSIX_FADV_RANDOM``) bypasses all of it: ``page_cache_sync_ra`` calls
  ``force_page_cache_ra(ractl, req_count)``, which reads exactly the requested pages, and
  ``page_cache_async_ra`` is never reached (no marker is ever set). ``POSIX_FADV_SEQUENTIAL``
  sets ``ra_pages = 2 x bdi->ra_pages`` (mm/fadvise.c ``generic_fadvise``).
- A request larger than the window may exceed it up to the device's ``io_pages``
  (max_sectors_kb): ``if (req_size > max_pages && bdi->io_pages > max_pages)
  max_pages = min(req_size, bdi->io_pages)``.

Not modelled: ``try_context_readahead`` (a read that is neither at index 0, nor at the expected
index, nor sequential to the previous read is treated as random; fio's random jobs never get
here: fadvise_hint sets FMODE_RANDOM), large folios (``page_cache_ra_order``: order-0 pages, as
ext4 before large-folio support).
"""

from __future__ import annotations

__all__ = ["RaState", "get_init_ra_size", "get_next_ra_size", "roundup_pow_of_two"]


def roundup_pow_of_two(n: int) -> int:
    """The smallest power of two >= ``n`` (``n`` >= 1)."""
    return 1 << (n - 1).bit_length()


def get_init_ra_size(size: int, max_pages: int) -> int:
    """mm/readahead.c ``get_init_ra_size``: the first window for a request of ``size`` pages."""
    newsize = roundup_pow_of_two(size)
    if newsize <= max_pages // 32:
        return newsize * 4
    if newsize <= max_pages // 4:
        return newsize * 2
    return max_pages


def get_next_ra_size(cur: int, max_pages: int) -> int:
    """mm/readahead.c ``get_next_ra_size``: the window after one of ``cur`` pages."""
    if cur < max_pages // 16:
        return 4 * cur
    if cur <= max_pages // 2:
        return 2 * cur
    return max_pages


class RaState:
    """``struct file_ra_state`` of one open file: the current window (``start``, ``size``,
    ``async_size``, pages), ``ra_pages`` (its maximum), ``prev_pos`` (the byte position where the
    last read ended; -1 before the first) and ``random`` (FMODE_RANDOM). ``decide`` returns the
    pages to read: (first page, number of pages, index of the marker page or -1)."""

    __slots__ = ("start", "size", "async_size", "ra_pages", "io_pages", "prev_pos", "random", "mmap_seq")

    def __init__(self, ra_pages: int, io_pages: int, random: bool = False):
        self.start = 0
        self.size = 0
        self.async_size = 0
        self.ra_pages = ra_pages  # file_ra_state_init: bdi->ra_pages (x2 after FADV_SEQUENTIAL)
        self.io_pages = io_pages  # bdi->io_pages: max_sectors_kb in pages
        self.prev_pos = -1
        self.random = random
        self.mmap_seq = False  # a mapping advised MADV_SEQUENTIAL (VM_SEQ_READ)

    def sync_ra(self, index: int, req_size: int) -> tuple[int, int, int]:
        """``page_cache_sync_ra``: the read missed at page ``index`` wanting ``req_size`` pages."""
        if self.random or self.ra_pages == 0:
            # force_page_cache_ra: exactly the requested pages (a single page without readahead)
            return index, (req_size if self.random and self.ra_pages else 1), -1
        return self._ondemand(index, req_size, False)

    def async_ra(self, index: int, req_size: int, next_miss: int) -> tuple[int, int, int]:
        """``page_cache_async_ra``: the read reached the marker page ``index`` (``req_size``:
        the pages it still wants from there; ``next_miss``: the first page after it not cached)."""
        if self.ra_pages == 0:
            return index, 0, -1
        return self._ondemand(index, req_size, True, next_miss)

    def _ondemand(self, index: int, req_size: int, hit_marker: bool, next_miss: int = -1) -> tuple[int, int, int]:
        """mm/readahead.c ``ondemand_readahead`` (order-0 pages)."""
        max_pages = self.ra_pages
        if req_size > max_pages and self.io_pages > max_pages:
            max_pages = min(req_size, self.io_pages)
        if index == 0:
            return self._initial(index, req_size, max_pages)
        if index == self.start + self.size - self.async_size or index == self.start + self.size:
            self.start += self.size
            self.size = get_next_ra_size(self.size, max_pages)
            self.async_size = self.size
            return self._readit(index, max_pages)
        if hit_marker:
            # a marker without matching state (another reader moved the window): ramp up from the
            # first page not cached after it (page_cache_next_miss)
            start = next_miss
            if start - index > max_pages:
                return index, 0, -1
            self.start = start
            self.size = get_next_ra_size(start - index + req_size, max_pages)
            self.async_size = self.size
            return self._readit(index, max_pages)
        if req_size > max_pages:
            return self._initial(index, req_size, max_pages)
        prev_index = self.prev_pos >> 12 if self.prev_pos >= 0 else -1
        if index - prev_index <= 1:
            return self._initial(index, req_size, max_pages)
        return index, req_size, -1  # a random read: do_page_cache_ra(ractl, req_size, 0)

    def _initial(self, index: int, req_size: int, max_pages: int) -> tuple[int, int, int]:
        self.start = index
        self.size = get_init_ra_size(req_size, max_pages)
        self.async_size = self.size - req_size if self.size > req_size else self.size
        return self._readit(index, max_pages)

    def _readit(self, index: int, max_pages: int) -> tuple[int, int, int]:
        if index == self.start and self.size == self.async_size:
            add = get_next_ra_size(self.size, max_pages)
            if self.size + add <= max_pages:
                self.size += add
            else:
                self.size = max_pages
                self.async_size = max_pages >> 1
        marker = self.start + self.size - self.async_size if self.async_size else -1
        return self.start, self.size, marker
