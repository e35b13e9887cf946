"""Model lists as OpenAI-shaped servers and the relay return them."""

from __future__ import annotations

from typing import Any

from melgui.core.protocol.transport import ModelInfo, sort_models


def parse_models(payload: Any) -> list[ModelInfo]:
    """An OpenAI-shaped model list (`{"data": [...]}`) as ModelInfo, sorted (wire protocol §1)."""
    items: Any = payload
    if isinstance(payload, dict):
        items = payload.get("data", payload.get("models"))
    if not isinstance(items, list):
        return []
    models = []
    for item in items:
        if isinstance(item, str):
            models.append(ModelInfo(item))
            continue
        if not isinstance(item, dict):
            continue
        model_id = item.get("id") or item.get("name")
        if not isinstance(model_id, str) or not model_id:
            continue
        params = item.get("supported_parameters")
        supports = "tools" in params if isinstance(params, list) else None
        name = item.get("name")
        extra = {key: value for key, value in item.items() if key not in ("id", "name")}
        models.append(ModelInfo(model_id, supports, name if isinstance(name, str) else "", extra))
    return sort_models(models)
