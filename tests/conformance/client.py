"""mcpsync's client for the official MCP conformance harness (``@modelcontextprotocol/conformance``).

The harness runs ``<command> <server-url>`` once per scenario with these environment variables:

- ``MCP_CONFORMANCE_SCENARIO``: the scenario name (e.g. ``tools_call``, ``auth/metadata-default``);
- ``MCP_CONFORMANCE_PROTOCOL_VERSION``: the wire the scenario runs at (0.2 harnesses only; absent
  means 2025-11-25). Dated revisions up to 2025-11-25 use the ``initialize`` handshake, 2026-07-28 the
  stateless lifecycle: the client is pinned to that revision with ``protocol=``;
- ``MCP_CONFORMANCE_CONTEXT``: JSON with scenario data (pre-registered client credentials, keys,
  assertions), for a few auth scenarios.

It uses only mcpsync's public API. Run it by hand against a harness that waits for a client::

    MCP_CONFORMANCE_SCENARIO=tools_call python tests/conformance/client.py http://localhost:PORT/mcp

Exit status 0 when the scenario's flow completed (or, for scenarios where the right behaviour is to
refuse, when mcpsync refused with the expected error); 1 otherwise, with the error on stderr.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
from typing import Any, Callable, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if ROOT not in sys.path:  # run from a checkout: use this tree's mcpsync
    sys.path.insert(0, ROOT)

import mcpsync  # noqa: E402
from mcpsync.auth import OAuthManager  # noqa: E402
from mcpsync.skills import list_skills, load_skill, read_skill_file  # noqa: E402

LEGACY = "2025-11-25"
CLIENT_INFO = {"name": "mcpsync-conformance-client", "version": mcpsync.__version__}
#: the CIMD URL the harness's auth scenarios accept as a client id (when the server advertises CIMD)
CIMD_URL = "https://conformance-test.local/client-metadata.json"

log = logging.getLogger("conformance-client")


def protocol_version() -> str:
    return os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or LEGACY


def context() -> Dict[str, Any]:
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    if not raw:
        return {}
    value = json.loads(raw)
    return value if isinstance(value, dict) else {}


def connect(url: str, **options: Any) -> mcpsync.Client:
    options.setdefault("protocol", protocol_version())
    options.setdefault("client_info", CLIENT_INFO)
    options.setdefault("timeout", 20)
    options.setdefault("connect_timeout", 20)
    return mcpsync.connect(url, **options)


def example_arguments(schema: Dict[str, Any]) -> Dict[str, Any]:
    """Arguments that satisfy a simple object schema (a value per required property)."""
    samples = {"string": "x", "number": 2, "integer": 3, "boolean": True}
    args: Dict[str, Any] = {}
    props = schema.get("properties") or {}
    for name in schema.get("required") or []:
        prop = props.get(name) or {}
        kind = prop.get("type")
        if "default" in prop:
            args[name] = prop["default"]
        elif isinstance(kind, str) and kind in samples:
            args[name] = samples[kind]
        else:
            args[name] = "x"
    return args


# ---------------------------------------------------------------------------------------- scenarios


def run_tools(url: str) -> None:
    """initialize / tools_call and the default: list the tools, call the first one with a=2, b=3."""
    with connect(url) as client:
        if "tools" not in (client.server_capabilities or {}):
            return  # the initialize scenario's server offers nothing: the handshake is the test
        tools = client.list_tools()
        if tools:
            client.call_tool(tools[0].name, {"a": 2, "b": 3})


def run_list_tools_only(url: str) -> None:
    """json-schema-ref-no-deref: list the tools (never fetching a schema's network $ref)."""
    with connect(url) as client:
        client.list_tools()


def run_schema_echo(url: str) -> None:
    """json-schema-2020-12-preservation: send back the focal tool's inputSchema exactly as listed."""
    with connect(url) as client:
        tools = {t.name: t for t in client.list_tools()}
        focal = tools["json_schema_2020_12_tool"]
        client.call_tool("json_schema_echo", {"schema": focal.input_schema})


def run_elicitation_defaults(url: str) -> None:
    """elicitation-sep1034-client-defaults: accept with every default the requested schema declares."""

    def elicit(req: mcpsync.ElicitationRequest) -> mcpsync.ElicitationResult:
        return req.accept(req.defaults())

    with connect(url, elicitation_handler=elicit) as client:
        client.call_tool("test_client_elicitation_defaults", {})


def run_sse_retry(url: str) -> None:
    """sse-retry: the server cuts the result's event stream; the call must still get its answer."""
    with connect(url) as client:
        tools = client.list_tools()
        client.call_tool(tools[0].name if tools else "test_reconnection", {})


def run_request_metadata(url: str) -> None:
    """request-metadata: stateless requests carry _meta + MCP-Protocol-Version; -32022 is retried."""
    with connect(url) as client:
        # the retried server/discover already carried the metadata; one more request after it
        if "tools" in (client.server_capabilities or {}):
            client.list_tools()
        else:
            client.ping()


def run_mrtr(url: str) -> None:
    """sep-2322-client-request-state: input_required rounds answered by the elicitation handler.

    While the first tool waits for its answer, the handler calls an unrelated tool: that call must
    carry none of the first call's inputResponses or requestState.
    """
    holder: Dict[str, mcpsync.Client] = {}
    unrelated_done: List[bool] = []

    def elicit(req: mcpsync.ElicitationRequest) -> mcpsync.ElicitationResult:
        if not unrelated_done:
            unrelated_done.append(True)
            holder["client"].call_tool("test_mrtr_unrelated", {})
        return req.accept({"confirmed": True})

    with connect(url, elicitation_handler=elicit) as client:
        holder["client"] = client
        client.list_tools()
        client.call_tool("test_mrtr_echo_state", {})
        client.call_tool("test_mrtr_no_state", {})
        client.call_tool("test_mrtr_no_result_type", {})


def run_standard_headers(url: str) -> None:
    """http-standard-headers: every kind of request, so each carries Mcp-Method (and Mcp-Name)."""
    with connect(url) as client:
        for tool in client.list_tools():
            client.call_tool(tool.name, example_arguments(tool.input_schema or {}))
        for resource in client.list_resources():
            client.read_resource(resource.uri)
        for prompt in client.list_prompts():
            client.get_prompt(prompt.name, {})


def run_custom_headers(url: str) -> None:
    """http-custom-headers: call the tools with the harness's values (mirrored as Mcp-Param-*)."""
    calls = context().get("toolCalls") or []
    with connect(url) as client:
        listed = {t.name for t in client.list_tools()}
        for call in calls:
            if call.get("name") in listed:
                client.call_tool(call["name"], call.get("arguments") or {})


def run_invalid_tool_headers(url: str) -> None:
    """http-invalid-tool-headers: mcpsync drops tools with invalid x-mcp-header; call every tool left."""
    with connect(url) as client:
        for tool in client.list_tools():
            client.call_tool(tool.name, example_arguments(tool.input_schema or {}))


def run_skills_no_prefetch(url: str) -> None:
    """sep-2640-client-no-prefetch: list the skills; nothing is fetched until a skill is loaded."""
    with connect(url) as client:
        skills = list_skills(client)
        log.info("listed %d skill(s): %s", len(skills), ", ".join(s.name for s in skills))


def run_skills_verify(url: str) -> None:
    """sep-2640-client-verify-*: load each skill and read its files; a verification failure stops it."""
    with connect(url) as client:
        for skill in list_skills(client):
            try:
                loaded = load_skill(client, skill)
                for entry in skill.resources:
                    if entry.uri != skill.uri:
                        read_skill_file(client, skill, entry.uri)
                log.info("loaded skill %s (%d bytes)", loaded.name, len(loaded.content))
            except mcpsync.SkillVerificationError as exc:
                # the expected outcome when the server serves tampered content: refuse and stop
                print("refused skill %s: %s" % (skill.uri, exc), file=sys.stderr)


# ------------------------------------------------------------------------------------------- auth


def _fetch_redirect(request: Any) -> str:
    """The headless browser step: GET the authorization URL and hand back its redirect Location."""
    import requests

    resp = requests.get(request.url, allow_redirects=False, timeout=20)
    location = resp.headers.get("Location")
    if not location:
        raise RuntimeError("authorization endpoint answered %d without a redirect" % resp.status_code)
    return location


def _oauth_config(scenario: str, ctx: Dict[str, Any]) -> Dict[str, Any]:
    config: Dict[str, Any] = {"clientMetadataUrl": CIMD_URL}
    if scenario == "auth/pre-registration":
        config.update(clientId=ctx["client_id"], clientSecret=ctx["client_secret"])
    elif scenario == "auth/client-credentials-basic":
        config.update(grant="client_credentials", clientId=ctx["client_id"], clientSecret=ctx["client_secret"])
        config["tokenEndpointAuthMethod"] = "client_secret_basic"
    elif scenario == "auth/client-credentials-jwt":
        config.update(grant="client_credentials", clientId=ctx["client_id"], privateKey=ctx["private_key_pem"])
        config.update(tokenEndpointAuthMethod="private_key_jwt", signingAlg=ctx.get("signing_algorithm") or "ES256")
    elif scenario in ("auth/enterprise-managed-authorization", "auth/cross-app-access-complete-flow"):
        config.update(grant="enterprise", clientId=ctx["client_id"], clientSecret=ctx["client_secret"])
        config.update(
            idpTokenEndpoint=ctx["idp_token_endpoint"],
            idToken=ctx["idp_id_token"],
            idpClientId=ctx["idp_client_id"],
        )
    elif scenario == "auth/wif-jwt-bearer":
        # workload identity: the application supplies the assertion (a callable: fresh on every use)
        valid_jwt = ctx["valid_jwt"]
        config.update(grant="jwt_bearer", clientId=ctx["client_id"], assertion=lambda: valid_jwt)
    return config


def run_auth(url: str) -> None:
    """Every auth/* scenario: an OAuth login driven headlessly, then tools/list and a tool call."""
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    ctx = context()
    with tempfile.TemporaryDirectory(prefix="mcpsync-conformance-") as tmp:
        oauth = OAuthManager(
            store=os.path.join(tmp, "mcp-auth.json"),
            authorize_handler=_fetch_redirect,
            client_name="mcpsync-conformance-client",
            open_browser=lambda _url: False,
        )
        oauth.add_server("conformance", url, oauth=_oauth_config(scenario, ctx))
        with connect(url, auth=oauth.auth("conformance", interactive=True)) as client:
            tools = client.list_tools()
            if tools:
                client.call_tool(tools[0].name, {})


# ------------------------------------------------------------------------------------------- main

SCENARIOS: Dict[str, Callable[[str], None]] = {
    "initialize": run_tools,
    "tools_call": run_tools,
    "elicitation-sep1034-client-defaults": run_elicitation_defaults,
    "sse-retry": run_sse_retry,
    "request-metadata": run_request_metadata,
    "sep-2322-client-request-state": run_mrtr,
    "http-standard-headers": run_standard_headers,
    "http-custom-headers": run_custom_headers,
    "http-invalid-tool-headers": run_invalid_tool_headers,
    "json-schema-ref-no-deref": run_list_tools_only,
    "json-schema-2020-12-preservation": run_schema_echo,
    "sep-2640-client-no-prefetch": run_skills_no_prefetch,
    "sep-2640-client-verify-digest": run_skills_verify,
    "sep-2640-client-verify-size": run_skills_verify,
    "sep-2640-client-verify-frontmatter": run_skills_verify,
}


def handler_for(scenario: str) -> Optional[Callable[[str], None]]:
    if scenario.startswith("auth/"):
        return run_auth
    return SCENARIOS.get(scenario)


def main(argv: List[str]) -> int:
    logging.basicConfig(
        level=logging.DEBUG if os.environ.get("MCPSYNC_CONFORMANCE_DEBUG") else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(argv) != 2 or not scenario:
        print("usage: MCP_CONFORMANCE_SCENARIO=<scenario> client.py <server-url>", file=sys.stderr)
        return 2
    handler = handler_for(scenario)
    if handler is None:
        print("unknown scenario %r" % scenario, file=sys.stderr)
        return 2
    log.info("scenario %s at %s (protocol %s)", scenario, argv[1], protocol_version())
    try:
        handler(argv[1])
    except mcpsync.MCPError as exc:
        print("%s: %s" % (type(exc).__name__, exc), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
