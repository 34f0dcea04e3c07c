"""The registry of completion policies. The interface (:class:`CompletionPolicy`) and the selection
rule (:func:`select_policy_name`) live next to the NVMe driver in :mod:`models.os.completion` and
are re-exported here for plug-ins."""

from __future__ import annotations

from models.os.completion import CompletionPolicy, select_policy_name
from simcore.plugins import Registry

COMPLETION_POLICIES = Registry("completion policy")

__all__ = ["COMPLETION_POLICIES", "CompletionPolicy", "select_policy_name"]
