"""What a handler receives is built from whatever a server sent: a malformed field is dropped, never trusted."""

from __future__ import annotations

from typing import Any, Dict

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsync.client.handlers import ElicitationRequest, SamplingRequest

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_SAMPLING_KEYS = [
    "messages",
    "maxTokens",
    "systemPrompt",
    "temperature",
    "stopSequences",
    "modelPreferences",
    "tools",
    "toolChoice",
]
_ELICITATION_KEYS = ["message", "mode", "requestedSchema", "url", "elicitationId"]


def _params(keys: Any) -> Any:
    return st.dictionaries(st.sampled_from(keys) | st.text(max_size=6), _JSON, max_size=len(keys) + 2)


def _kept(params: Dict[str, Any], key: str, kind: Any, default: Any = None) -> Any:
    value = params.get(key)
    return value if isinstance(value, kind) else default


@settings(max_examples=200)
@given(_params(_SAMPLING_KEYS))
def test_a_sampling_request_keeps_each_well_typed_field_and_drops_the_rest(params: Dict[str, Any]) -> None:
    request = SamplingRequest.from_params(params, server="s")
    assert all(isinstance(m, dict) for m in request.messages)
    assert request.max_tokens == _kept(params, "maxTokens", int)
    assert request.system_prompt == _kept(params, "systemPrompt", str)
    assert request.temperature == _kept(params, "temperature", (int, float))
    assert request.stop_sequences == _kept(params, "stopSequences", list)
    assert request.model_preferences == _kept(params, "modelPreferences", dict)
    assert request.tools == _kept(params, "tools", list)
    assert request.tool_choice == _kept(params, "toolChoice", dict)
    assert request.server == "s" and request.raw is params
    assert isinstance(request.text, str)


@settings(max_examples=200)
@given(_params(_ELICITATION_KEYS))
def test_an_elicitation_request_keeps_each_well_typed_field_and_defaults_the_rest(params: Dict[str, Any]) -> None:
    request = ElicitationRequest.from_params(params)
    assert request.message == _kept(params, "message", str, "")
    assert request.mode == _kept(params, "mode", str, "form")
    assert request.requested_schema == _kept(params, "requestedSchema", dict, {})
    assert request.url == _kept(params, "url", str)
    assert request.elicitation_id == _kept(params, "elicitationId", str)
    assert isinstance(request.fields, dict) and isinstance(request.required, list)
