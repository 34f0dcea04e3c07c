"""IO completion policies (block layer): interrupt, classic polling, hybrid polling.

Select the Linux way: queue ``io_poll`` + ``io_poll_delay`` and the job's ``hipri`` flag (see
:func:`select_policy`), or name a registered policy with ``queue.completion``.
"""

from policies.completion.base import COMPLETION_POLICIES, CompletionPolicy, select_policy_name
from policies.completion import interrupt, classic_poll, hybrid_poll  # noqa: F401  (registration)

__all__ = ["COMPLETION_POLICIES", "CompletionPolicy", "select_policy_name"]
