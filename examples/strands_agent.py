"""A Strands agent calling tools of two MCP servers through mcpsync.

    python examples/strands_agent.py          (needs: pip install mcpsync[strands])

``main()`` calls the agent synchronously (``agent(...)``, also fine on Jupyter's loop thread); ``amain()`` awaits
``invoke_async`` (Jupyter: ``await amain()``). The tool provider owns its Manager: ``agent.cleanup()`` closes it.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from frameworks_common import CALLS, servers  # noqa: E402
from strands import Agent  # noqa: E402
from strands.models import Model  # noqa: E402

from mcpsync.integrations.strands import McpsyncToolProvider  # noqa: E402


class StandInModel(Model):  # type: ignore[misc]
    """Stands in for your model (e.g. BedrockModel) so the example runs offline: it asks for CALLS, then
    answers."""

    def __init__(self) -> None:
        self.asked = False

    def update_config(self, **config: Any) -> None:
        pass

    def get_config(self) -> Dict[str, Any]:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - unused
        raise NotImplementedError
        yield

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
        yield {"messageStart": {"role": "assistant"}}
        if not self.asked:
            self.asked = True
            for i, (name, args) in enumerate(CALLS):
                yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "call-%d" % i, "name": name}}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args)}}}}
                yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            return
        yield {"contentBlockDelta": {"delta": {"text": "2+3=5, 4+5=9"}}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def tool_results(agent: Any) -> Dict[str, str]:
    names = {"call-%d" % i: name for i, (name, _) in enumerate(CALLS)}
    blocks = [b["toolResult"] for m in agent.messages for b in m["content"] if "toolResult" in b]
    return {names[r["toolUseId"]]: r["content"][0]["text"] for r in blocks}


def new_agent(model: Any = None) -> Any:
    provider = McpsyncToolProvider.from_config(servers(), max_result_chars=20_000)
    return Agent(model=model or StandInModel(), tools=[provider], callback_handler=None)


def main(model: Any = None) -> Dict[str, str]:
    agent = new_agent(model)
    try:
        agent("Add 2 and 3 on one server, 4 and 5 on the other.")
        return tool_results(agent)
    finally:
        agent.cleanup()  # the provider closes its servers with its last agent


async def amain(model: Any = None) -> Dict[str, str]:
    import asyncio

    agent = await asyncio.to_thread(new_agent, model)  # connecting blocks: keep it off the loop
    try:
        await agent.invoke_async("Add 2 and 3, then 4 and 5.")
        return tool_results(agent)
    finally:
        await asyncio.to_thread(agent.cleanup)


if __name__ == "__main__":
    for name, text in main().items():
        print("%s -> %s" % (name, text))
