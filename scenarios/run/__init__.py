"""Running one configuration: :func:`.simulate.simulate` (any configuration -> :class:`.result.Result`),
the assembly of a host or a server from its configuration (:mod:`.assembly`), trace replay on a host
(:mod:`.replay`), storage-server runs (:mod:`.server`), a host run's streaming statistics
(:mod:`.iostats`) and summary (:mod:`.summary`), and the output files (:mod:`.outputs`)."""
