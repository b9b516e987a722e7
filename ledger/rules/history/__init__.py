"""Rules of the per-goal history, the registries and the rollout log
(docs/formats/history_registry_rollout.md)."""
