"""``fs/``: the file system under file jobs: where each file lies on the SSDs and what its extent
lookup costs."""
