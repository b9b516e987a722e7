"""Payload of ``global_synced`` (stream ``registry/global``): the global registry document as a
sync left it (docs/formats/history_registry_rollout.md §7), with what the sync did.
"""

from __future__ import annotations

from benchledger.ledger.contracts.base import Closed, JsonObject, Open, optional


class GlobalRegistryDocument(Open):
    """The ``registry.global.json`` document; goal entries keep whatever a project wrote."""

    schema_version: str
    updated_at: str = optional()
    common_runtime_root: str = optional()
    registry_role: str = optional()
    projects: list[JsonObject] = optional()
    goals: list[JsonObject]


class RegistryBackup(Closed):
    name: str
    document: JsonObject


class GlobalSyncedV1(Closed):
    registry_id: str
    document: GlobalRegistryDocument
    goal_ids: list[str]
    actions: list[str] | None
    backup: RegistryBackup | None
