"""The environment's values for the settings: `MELGUI_<FIELD>` for any field (any case),
and a field's own names for one that has them (`OPENAI_BASE_URL`). A list, a dict or a
model is given as JSON (`MELGUI_RULES='["allow write_file"]'`).

Read here with what the settings already use (pydantic and json), as pydantic-settings'
environment source read them: that library costs a process about 10 MB (it imports most
of pydantic and more), which the melgui host would hold while it waits for a window.
"""

from __future__ import annotations

import json
import os
import types
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import AliasChoices, BaseModel
from pydantic.fields import FieldInfo

PREFIX = "MELGUI_"


class BadVariable(ValueError):
    """A variable's value is not the JSON its field takes; the message names both."""


class OverriddenByEnvironment(BaseModel):
    """A model whose environment variables override the values it is made with (a
    base class, so that type checkers still read each model's own fields as its
    constructor's keywords)."""

    def __init__(self, **values: Any) -> None:
        model = type(self)
        super().__init__(**deep_update(field_names(model, values), environment_values(model)))


def environment_values(
    model: type[BaseModel], environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The fields the environment sets, by field name: the first of a field's variables
    that is set (its own names first, then `MELGUI_<FIELD>`)."""
    environ = os.environ if environ is None else environ
    found = {name.lower(): value for name, value in environ.items()}
    values: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        variable = next((v for v in variables(name, field) if v in found), None)
        if variable is not None:
            value = _parsed(name, variable, found[variable], field)
            if value is not None:  # JSON's null: as if the variable were not set
                values[name] = value
    return values


def variables(name: str, field: FieldInfo) -> list[str]:
    """The variables (lower case) that set a field, the first that is set winning."""
    alias = field.validation_alias
    own = [alias] if isinstance(alias, str) else []
    if isinstance(alias, AliasChoices):
        own = [choice for choice in alias.choices if isinstance(choice, str)]
    return [variable.lower() for variable in (*own, PREFIX + name)]


def field_names(model: type[BaseModel], values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` keyed by field name where a key is one of a field's other names."""
    renamed = dict(values)
    for name, field in model.model_fields.items():
        alias = field.validation_alias
        if name in renamed or not isinstance(alias, AliasChoices):
            continue
        given = next((a for a in alias.choices if isinstance(a, str) and a in renamed), None)
        if given is not None:
            renamed[name] = renamed.pop(given)
    return renamed


def deep_update(base: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `update` over it; a dict in both is merged the same way."""
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_update(merged[key], value)
        else:
            merged[key] = value
    return merged


def _parsed(name: str, variable: str, text: str, field: FieldInfo) -> Any:
    if not _is_complex(field.annotation):
        return text  # pydantic reads "true", "120", "relay" as the field's type
    try:
        return json.loads(text)
    except ValueError:
        raise BadVariable(
            f"{variable.upper()} is not valid JSON (the setting {name} takes a "
            "JSON list, object or model)"
        ) from None


def _is_complex(annotation: Any) -> bool:
    """Whether a field's values are lists, dicts or models (given as JSON)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_complex(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(_is_complex(arg) for arg in get_args(annotation))
    kind = origin or annotation
    if not isinstance(kind, type) or issubclass(kind, str | bytes):
        return False
    return issubclass(kind, BaseModel | Mapping | Sequence | set | frozenset)
