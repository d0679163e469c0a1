"""Every server.json the registry tests serve is valid against the registry's official JSON Schema (2025-12-11,
vendored in tests/registry/, source named in tests/registry/data/README.md)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.peers.registryserver import FIXTURES, fixture

SCHEMA = json.loads((FIXTURES / "server.schema.2025-12-11.json").read_text(encoding="utf-8"))
DOCUMENTS = sorted(p.name for p in FIXTURES.glob("*.json") if not p.name.startswith("server.schema"))


def test_the_vendored_schema_is_the_2025_12_11_release():
    assert SCHEMA["$id"] == "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    assert "RemoteTransport" in SCHEMA["definitions"]  # 2025-12-11: URL template variables on remotes


@pytest.mark.parametrize("name", DOCUMENTS)
def test_fixture_is_valid_server_json(name):
    doc = json.loads(json.dumps(fixture(name)).replace("{REGISTRY}", "https://github.com/acme/r/releases/download/v1")
                     .replace("{SHA256}", "ab" * 32))
    assert doc["$schema"] == SCHEMA["$id"]
    jsonschema.Draft7Validator(SCHEMA).validate(doc)


def test_the_schema_rejects_what_the_client_must_not_trust():
    bad = fixture("npm-everything.json")
    bad["packages"][0]["version"] = "latest"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(SCHEMA).validate(bad)
