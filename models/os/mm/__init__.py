"""``mm/``: the page cache (``filemap.c``), readahead (``readahead.c``), dirty-page writeback
(``page-writeback.c``) and reclaim (``vmscan.c``) under buffered IO."""
