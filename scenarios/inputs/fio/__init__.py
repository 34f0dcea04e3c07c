"""fio job files for stacksim: parse real fio INI job files into validated :class:`FioJob` s.

See :mod:`scenarios.inputs.fio.options` for which fio options the simulator uses, ignores or rejects,
and :mod:`scenarios.inputs.fio.units` for fio's size/time syntax.
"""

from .options import FIO_OPTIONS, STACKSIM_OPTIONS, OptionSpec
from .parser import FioJob, FioJobFile, apply_overrides, job_from_options, parse_fio_file, parse_fio_text
from .units import parse_bool, parse_cpu_list, parse_cpumask, parse_int, parse_size, parse_time_ns

__all__ = [
    "FIO_OPTIONS",
    "STACKSIM_OPTIONS",
    "OptionSpec",
    "FioJob",
    "FioJobFile",
    "apply_overrides",
    "job_from_options",
    "parse_fio_file",
    "parse_fio_text",
    "parse_bool",
    "parse_cpu_list",
    "parse_cpumask",
    "parse_int",
    "parse_size",
    "parse_time_ns",
]
