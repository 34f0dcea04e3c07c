"""The registry of completion policies. The interface (:class:`CompletionPolicy`) lives next to the
NVMe driver in :mod:`models.os.block.completion` (with the kernel's selection rule,
``completion_policy_name``), and the rule for a fio job (:func:`select_policy_name`: its engine and
hipri in the kernel's terms) in :mod:`models.ioengines`; both are re-exported here for plug-ins."""

from __future__ import annotations

from models.ioengines import select_policy_name
from models.os.block.completion import CompletionPolicy, completion_policy_name
from simcore.plugins import Registry

COMPLETION_POLICIES = Registry("completion policy")

__all__ = ["COMPLETION_POLICIES", "CompletionPolicy", "completion_policy_name", "select_policy_name"]
