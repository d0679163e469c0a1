"""Hidden set-ups for docs snippets that use names from the surrounding text (tests/docs/test_doc_snippets.py).

A ```python block preceded by ``<!-- snippet: setup NAME -->`` runs as: ``SETUPS[NAME].before``, then the block
(with each ``replace`` key swapped for its value, a Python expression the set-up defines), then
``SETUPS[NAME].after`` (which checks what the block did and cleans up; ``SNIPPET`` holds the block's text), in one fresh
interpreter, against local peers only. The reader sees the block exactly as it runs.
"""

from __future__ import annotations

from typing import Dict, NamedTuple


class Setup(NamedTuple):
    before: str
    after: str = ""
    replace: Dict[str, str] = {}
    stdin: str = ""  # what a person types at the terminal the block reads from
    requires: str = ""  # a module the block needs (an optional framework): skipped, with the reason, without it
    desktop: bool = False  # the pywebview and Qt interpreter (tests/browser/test_apps_desktop.py), offscreen


EXAMPLE = '["python", "-m", "mcpsync.example_server"]'

#: Cards: a local Server Card host, its AI Catalog, and the example server over HTTP behind the card's remote (a
#: ``forecast`` tool added to it). Local addresses are refused by default (a card must not point at the local
#: network); the swapped-in peers live on 127.0.0.1, so the policy's default allows that one host here.
CARDS = """
from mcpsync.cards import safety as _safety
_make = _safety.URLPolicy.make.__func__
_safety.URLPolicy.make = classmethod(
    lambda cls, allow_local=False, *a, **k: _make(cls, allow_local or frozenset(["127.0.0.1"]), *a, **k))
from tests.peers.cardserver import CARD_TYPE, CardServer, card_document
from tests.peers.httpserver import MCPTestServer
mcp = MCPTestServer(era="auto").start()
mcp.core.extra_tools["forecast"] = {"name": "forecast", "description": "The weather in a city",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}
host = CardServer().__enter__()
CARD_URL = host.route("/mcp/server-card", card_document(mcp.url, headers=[
    {"name": "X-API-Key", "isRequired": True, "isSecret": True, "description": "API key for authentication"}]))
host.catalog([{"identifier": "urn:air:example.com:mcp:weather", "type": CARD_TYPE, "url": "/mcp/server-card"}])
key = "k3y"
"""
CARDS_AFTER = """
sent = {r.headers.get("x-api-key") for r in mcp.records(method="POST")}
host.__exit__(None, None, None)
mcp.stop()
"""

#: OAuth: a local authorization server (tests/peers/authserver.py) in front of the example server over HTTP, which takes
#: only the access tokens it issued; the "browser" is a command ($BROWSER, which webbrowser runs) that fetches the
#: authorization URL and follows its redirect to mcpsync's callback, as a person approving in a browser would.
OAUTH = """
import os, shlex, sys, time
from tests.peers import httpserver
from tests.peers.authserver import AuthTestServer, free_port
auth_server = AuthTestServer().__enter__()
mcp = httpserver.MCPTestServer().start()
auth_server.prm["resource"] = mcp.url
_challenge = 'Bearer resource_metadata="%s%s"' % (auth_server.base, auth_server.prm_header_path)
_auth_ok = httpserver._Handler._auth_ok
def _only_issued_tokens(handler, msg):
    token = handler.headers.get("Authorization", "")[len("Bearer "):]
    with auth_server.lock:
        info = auth_server.access_tokens.get(token)
    if info is None or (info["exp"] is not None and info["exp"] < time.time()):
        handler.reply(401, b'{"error":"unauthorized"}', headers={"WWW-Authenticate": _challenge})
        return False
    return bool(_auth_ok(handler, msg))
httpserver._Handler._auth_ok = _only_issued_tokens
os.environ["MCPSYNC_OAUTH_CALLBACK_PORT"] = str(free_port())
os.environ["BROWSER"] = shlex.join(
    [sys.executable, "-c", "import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()"]) + " %s"
"""

SETUPS: Dict[str, Setup] = {
    # docs/guides/apps.md: the desktop window (pywebview, Qt offscreen) of the example server's counter App; the
    # window is closed (as a person would) once the View has initialized
    "apps-desktop": Setup(
        before="""
import sys, threading, time
import mcpsync
from mcpsync.client import ClientOptions, StdioOptions
client = mcpsync.connect([sys.executable, "-m", "mcpsync.example_server", "--apps"], options=ClientOptions(apps=True),
                         stdio=StdioOptions(inherit_env=True))   # this tree's mcpsync ($PYTHONPATH) in the server
seen = {}
def _close_once_initialized():
    deadline = time.monotonic() + 120
    while getattr(globals().get("app"), "window", None) is None and time.monotonic() < deadline:
        time.sleep(0.05)   # the block has not made its window yet
    seen["initialized"] = app.bridge.wait_initialized(max(0.0, deadline - time.monotonic()))
    app.window.destroy()
threading.Thread(target=_close_once_initialized, name="docs-close-window", daemon=True).start()
""",
        after="""
assert seen == {"initialized": True}, seen
app.close()
client.close()
""",
        desktop=True,
    ),
    # docs/guides/oauth.md: workload identity (jwt-bearer); the platform's token file holds a JWT signed by a key the
    # local authorization server trusts; `oauth` is the OAuthManager of the first example
    "oauth-workload": Setup(
        before=OAUTH
        + """
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
import mcpsync
from mcpsync.auth import CredentialStore, OAuthManager
_key = ec.generate_private_key(ec.SECP256R1())
auth_server.workload_keys["https://kubernetes.default.svc"] = _key.public_key()
auth_server.add_client("agent-prod", method="none")
_now = int(time.time())
with open("mcp-token", "w") as fh:
    fh.write(jwt.encode({"iss": "https://kubernetes.default.svc", "sub": "system:serviceaccount:prod:agent",
                         "aud": auth_server.issuer, "iat": _now, "exp": _now + 300, "jti": "w-1"}, _key, "ES256"))
oauth = OAuthManager(store=CredentialStore(os.path.abspath("tokens.json")))
""",
        after="""
forms = [t["form"] for t in auth_server.token_requests()]
assert [f["grant_type"] for f in forms] == ["urn:ietf:params:oauth:grant-type:jwt-bearer"], forms
assert forms[0]["client_id"] == "agent-prod" and forms[0]["assertion"] == open("mcp-token").read().strip()
assert auth_server.requests_to("/authorize") == []
oauth.close()
mcp.stop()
auth_server.close()
""",
        replace={'"https://mcp.internal/mcp"': "mcp.url", '"/var/run/secrets/tokens/mcp-token"': '"mcp-token"'},
    ),
    # docs/guides/oauth.md: the browser login, then a call with the token
    "oauth-login": Setup(
        before=OAUTH,
        after="""
assert [t["form"]["grant_type"] for t in auth_server.token_requests()] == ["authorization_code"]
assert any(r.headers.get("authorization", "").startswith("Bearer ") for r in mcp.records(method="POST"))
oauth.close()
mcp.stop()
auth_server.close()
""",
        replace={'"https://mcp.linear.app/mcp"': "mcp.url"},
    ),
    # docs/guides/registry.md: search, install, outdated and update against a local registry ($MCPSYNC_REGISTRY_URL)
    # serving io.github.acme/weather 1.2.0 and 1.3.0 (a container server: a stand-in `docker` is on PATH, never run);
    # the person at the terminal answers y to both consents
    "registry-install": Setup(
        before="""
import json, os, stat
from tests.peers.registryserver import RegistryServer, entry, fixture
v1 = fixture("oci-weather.json")
v1["packages"][0]["runtimeArguments"] = v1["packages"][0]["runtimeArguments"][:1]   # no cache folder to ask for
v2 = json.loads(json.dumps(v1).replace("1.2.0", "1.3.0"))
registry_server = RegistryServer([entry(v1, latest=False), entry(v2)]).__enter__()
os.environ["MCPSYNC_REGISTRY_URL"] = registry_server.url
os.makedirs("bin")
with open(os.path.join("bin", "docker"), "w") as fh:
    fh.write("#!/bin/sh\\nexit 1\\n")
os.chmod(os.path.join("bin", "docker"), stat.S_IRWXU)
os.environ["PATH"] = os.path.abspath("bin") + os.pathsep + os.environ["PATH"]
key = "k3y"
""",
        after="""
assert result.config_name == "weather", result.config_name
assert item.installed == "1.2.0" and item.latest == "1.3.0", item
assert mcpsync.registry.outdated("~/.cursor/mcp.json") == []
config = json.load(open(os.path.expanduser("~/.cursor/mcp.json")))["mcpServers"]["weather"]
assert "ghcr.io/acme/weather-mcp:1.3.0" in config["args"] and config["args"][-2:] == ["Paris", "Oslo"], config
registry_server.__exit__(None, None, None)
""",
        stdin="y\ny\n",
    ),
    # docs/guides/cards.md: discover the cards of a domain (its AI Catalog on a local host)
    "cards-discover": Setup(
        before=CARDS,
        after="""
assert card.name == "io.example/weather" and remote.url == mcp.url, (card.name, remote.url)
assert host.hits("/.well-known/ai-catalog.json") and host.hits("/mcp/server-card")
"""
        + CARDS_AFTER,
        replace={'cards.discover("example.com")': "cards.discover(host.base)"},
    ),
    # docs/guides/cards.md: connect from a card, with the secret header the card requires
    "cards-connect": Setup(
        before=CARDS,
        after=CARDS_AFTER
        + """
assert sent == {"k3y"}, sent
""",
        replace={'"https://weather.example.com/mcp/server-card"': "CARD_URL"},
    ),
    # docs/guides/cards.md: install a card into a configuration file; the person at the terminal answers y
    "cards-install": Setup(
        before=CARDS,
        after="""
import json, os
config = json.load(open(os.path.expanduser("~/.cursor/mcp.json")))
assert "k3y" not in json.dumps(config), config
entry = next(iter(config["mcpServers"].values()))
assert entry["url"] == mcp.url and entry["registry"]["card"] == CARD_URL, entry
"""
        + CARDS_AFTER,
        replace={'"https://weather.example.com/mcp/server-card"': "CARD_URL"},
        stdin="y\n",
    ),
    # docs/guides/example-server.md: embedding the server core behind a transport of your own
    "example-server-core": Setup(
        before="""
from mcpsync.example_server import QueueConnection
conn = QueueConnection()
get_stream_conn = QueueConnection()
message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "docs", "version": "0"}}}
""",
        after="""
answer = [m for m in conn.until_response(1, timeout=30) if m.get("id") == 1]
assert answer and answer[0]["result"]["serverInfo"], answer
""",
    ),
    # docs/guides/input.md: a paused call signed into a form, checked once when the form comes back
    "input-token": Setup(
        before="""
import secrets
import mcpsync
from tests.peers.redisserver import RedisServer
import shutil
redis_server = RedisServer(shutil.which("redis-server"))
redis_server.start()
secret = secrets.token_bytes(32)
with mcpsync.connect(%s, name="shop", extensions=[mcpsync.input.DeferInput()]) as _client:
    try:
        _client.call_tool("elicit", {"message": "Confirm the order?"})
    except mcpsync.input.InputRequired as paused:
        ir = paused
"""
        % EXAMPLE,
        after="""
try:
    mcpsync.input.InputRequired.loads(token, secret, max_age=15 * 60, seen=seen)
    raise AssertionError("a token was accepted twice")
except mcpsync.errors.InputReplayed:
    pass
redis_server.close()
""",
        replace={'"redis://cache:6379/0"': "redis_server.url"},
    ),
    # docs/guides/oauth.md: the OAuthManager of the first example, with a store in a temporary folder
    "oauth-manager": Setup(
        before="""
import os
from mcpsync.auth import CredentialStore, OAuthManager
oauth = OAuthManager(store=CredentialStore(os.path.join(os.getcwd(), "tokens.json")))
""",
        after="""
assert oauth.supports_oauth("bank")
oauth.close()
""",
    ),
    # docs/guides/apps.md: a Flask app and a client of the example server with its counter App
    "apps-flask": Setup(
        before="""
import mcpsync
from flask import Flask, redirect
app = Flask(__name__)
client = mcpsync.connect(["python", "-m", "mcpsync.example_server", "--apps"])
opened = []
def ask_then_open(url):
    opened.append(url)
    return False
""",
        after="""
answer = app.test_client().get("/show", headers={"Host": "127.0.0.1:5000"})
assert answer.status_code in (302, 303), answer.status
assert answer.headers["Location"], answer.headers
host.close()
client.close()
""",
    ),
    # docs/guides/oauth.md: one Redis credential store for an OAuthManager and a Manager
    "oauth-redis-store": Setup(
        before="""
import json
import shutil
import mcpsync
from tests.peers.redisserver import RedisServer
redis_server = RedisServer(shutil.which("redis-server"))
redis_server.start()
with open("opencode.json", "w") as fh:
    json.dump({"mcp": {"example": {"type": "local", "command": ["python", "-m", "mcpsync.example_server"]}}}, fh)
""",
        after="""
with manager:
    assert manager.call_tool("add", {"a": 2, "b": 3}, server="example").text == "5"
assert redis_server.client().ping()
oauth.close()
redis_server.close()
""",
        replace={'"redis://redis.internal:6379/0"': "redis_server.url"},
    ),
    # docs/guides/testing.md: a test file of a package whose server is an SDK MCPServer, run by pytest
    "testing-in-process": Setup(
        before="""
import os
os.makedirs("my_package", exist_ok=True)
open(os.path.join("my_package", "__init__.py"), "w").close()
with open(os.path.join("my_package", "server.py"), "w") as fh:
    fh.write(
        "from mcp.server.mcpserver import MCPServer\\n"
        "mcp = MCPServer('adder')\\n"
        "@mcp.tool()\\n"
        "def add(a: int, b: int) -> int:\\n"
        "    return a + b\\n"
    )
""",
        after="""
import subprocess, sys
with open("test_adder.py", "w") as fh:
    fh.write(SNIPPET)
run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                      "test_adder.py"], capture_output=True, text=True, timeout=120)
assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout + run.stderr
""",
    ),
    # docs/guides/skills.md: a stdio server that serves one skill with a supporting file (tests/peers/skillserver.py)
    "skills-server": Setup(
        before="""
import hashlib, json, os, sys
SKILL_URI = "skill://pdf-processing/SKILL.md"
FORMS_URI = "skill://pdf-processing/references/FORMS.md"
SKILL_MD = "---\\nname: pdf-processing\\ndescription: Extract, fill, and assemble PDF documents\\n---\\n\\n# PDF\\n"
FORMS_MD = "Filling forms.\\n"
def _file(uri, text):
    data = text.encode("utf-8")
    return {"uri": uri, "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}
with open("skills.json", "w") as fh:
    json.dump({"log": os.path.abspath("requests.jsonl"), "files": {SKILL_URI: SKILL_MD, FORMS_URI: FORMS_MD},
               "skills": [{"uri": SKILL_URI, "frontmatter": {"name": "pdf-processing",
                           "description": "Extract, fill, and assemble PDF documents"},
                           "resources": [_file(SKILL_URI, SKILL_MD), _file(FORMS_URI, FORMS_MD)]}]}, fh)
SKILL_SERVER = [sys.executable, os.path.join(os.environ["PYTHONPATH"].split(os.pathsep)[0],
                                             "tests", "peers", "skillserver.py"),
                "skills.json"]
""",
        after="""
assert prompt_text == "\\n# PDF\\n" or prompt_text.strip() == "# PDF", repr(prompt_text)
assert forms.text == FORMS_MD
with open("requests.jsonl") as fh:
    reads = [json.loads(line)["params"]["uri"] for line in fh if '"resources/read"' in line]
assert reads == [SKILL_URI, FORMS_URI], reads
""",
        replace={'mcpsync.connect("https://host/mcp")': "mcpsync.connect(SKILL_SERVER)"},
    ),
}

#: Frameworks (docs/guides/frameworks.md): each block runs the framework's own agent loop with the scripted (fake)
#: model its integration test uses, against the example server, which records every request it receives
#: (tests/peers/misbehaving_server.py ``--record``; ``mcp.json`` names it "example"). The check: the model's tool
#: call reached the server as ``add``. Skipped where the framework is not installed (the frameworks stage has it).
FRAMEWORK = """
import json, os, sys
RECORD = os.path.abspath("calls.jsonl")
_root = os.environ["PYTHONPATH"].split(os.pathsep)[0]
with open("recording_server.py", "w") as fh:   # this tree's mcpsync, whatever the server's environment
    fh.write("import runpy, sys\\nsys.path[:0] = [%r, %r]\\nsys.argv[1:] = ['--record', %r]\\n"
             "runpy.run_path(%r, run_name='__main__')\\n" % (_root, os.path.join(_root, "tests", "peers"), RECORD,
             os.path.join(_root, "tests", "peers", "misbehaving_server.py")))
SERVER = [sys.executable, os.path.abspath("recording_server.py")]
with open("mcp.json", "w") as fh:
    json.dump({"mcpServers": {"example": {"command": SERVER[0], "args": SERVER[1:]}}}, fh)
CALLS = [("example_add", {"a": 2, "b": 3})]
"""
FRAMEWORK_AFTER = """
with open(RECORD) as fh:
    called = [json.loads(line)["tool"] for line in fh if json.loads(line)["method"] == "tools/call"]
assert called == ["add"], called
"""


def _framework(requires: str, before: str, replace: Dict[str, str] = {}) -> Setup:  # noqa: B006 - never mutated
    return Setup(before=FRAMEWORK + before, after=FRAMEWORK_AFTER, replace=replace, requires=requires)


SETUPS.update(
    {
        "fw-langchain": _framework(
            "langchain",
            "from tests.integrations.test_integrations_langchain import script\nmodel = script(CALLS)\n",
        ),
        "fw-pydantic-ai": _framework(
            "pydantic_ai",
            "from tests.integrations.test_integrations_pydantic_ai import scripted\n",
            {
                '"openai:gpt-4o"': 'scripted([("add", {"a": 2, "b": 3})])',
                EXAMPLE: "SERVER",
            },
        ),
        "fw-smolagents": _framework(
            "smolagents",
            "from tests.integrations.test_integrations_smolagents import ScriptedModel\nmodel = ScriptedModel(CALLS)\n",
        ),
        "fw-openai-agents": _framework(
            "agents",
            "from tests.integrations.test_integrations_openai_agents import ScriptedModel\n"
            "model = ScriptedModel(CALLS)\n",
        ),
        "fw-llamaindex": _framework(
            "llama_index.core",
            "from tests.integrations.test_integrations_llamaindex import scripted\nllm = scripted(CALLS)\n",
        ),
        "fw-crewai": _framework(
            "crewai",
            "from tests.integrations.test_integrations_crewai import ScriptedLLM\n"
            'llm = ScriptedLLM(model="scripted", calls=CALLS, seen={}, turn=0)\n',
        ),
        "fw-dspy": _framework(
            "dspy",
            """
import dspy
from dspy.utils.dummies import DummyLM
dspy.configure(lm=DummyLM([
    {"next_thought": "add", "next_tool_name": "example_add", "next_tool_args": {"a": 2, "b": 3}},
    {"next_thought": "finished", "next_tool_name": "finish", "next_tool_args": {}},
    {"reasoning": "2 + 3 = 5", "answer": "5"},
]), adapter=dspy.ChatAdapter())
""",
        ),
        "fw-haystack": _framework(
            "haystack",
            "from tests.integrations.test_integrations_haystack import ScriptedGenerator\n"
            "generator = ScriptedGenerator(CALLS)\n",
        ),
        "fw-agent-framework": _framework(
            "agent_framework",
            "from tests.integrations.test_integrations_agent_framework import ScriptedChatClient\n"
            "chat_client = ScriptedChatClient(\n"
            '    CALLS, function_invocation_configuration={"include_detailed_errors": True})\n',
        ),
        "fw-strands": _framework(
            "strands",
            "from tests.integrations.test_integrations_strands import ScriptedModel\nmodel = ScriptedModel(CALLS)\n",
        ),
        "fw-google-adk": _framework(
            "google.adk",
            "from tests.integrations.test_integrations_google_adk import ScriptedLlm\n"
            'llm = ScriptedLlm(model="scripted", calls=CALLS)\n',
            {'model="gemini-2.5-flash"': "model=llm"},
        ),
        # the adapter's configuration names one server, "math": math_server.py in the working folder runs the recording
        # example server
        "fw-langchain-mcp": _framework(
            "langchain",
            """
with open("math_server.py", "w") as fh:
    fh.write("import os, sys\\nos.execv(sys.executable, %r)\\n" % SERVER)
from tests.integrations.test_integrations_langchain import script
model = script([("math_add", {"a": 2, "b": 3})])
""",
        ),
    }
)
