"""Running one configuration: :func:`.simulate.simulate` (any configuration -> :class:`.result.Result`),
the assembly of a host or a server from its configuration (:mod:`.assembly`), trace replay on a host
(:mod:`.replay`), storage-server runs (:mod:`.server`), a host run's summary (:mod:`.summary`; its
streaming statistics are fio's, :mod:`models.ioengines.iostats`), and the output files
(:mod:`.outputs`)."""
