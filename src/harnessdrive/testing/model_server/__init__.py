"""A scripted model server for tests: real HTTP on 127.0.0.1, real agent CLIs as clients.

    from harnessdrive.testing.model_server import ModelServer, Script, Turn, Usage, WriteFile

    script = Script(turns=(
        Turn(text="Creating it.", actions=(WriteFile(path="hello.txt", content="hi\\n"),),
             usage=Usage(input=100, cache_read=30, cache_write=20, output=50, reasoning=7)),
        Turn(text="Done.", usage=Usage(input=120, output=5)),
    ))
    with ModelServer(script) as server:
        env = {"ANTHROPIC_BASE_URL": server.endpoints.anthropic}
        ...  # run the CLI
        assert [r.turn for r in server.turns()] == [0, 1]
        assert server.totals("anthropic") == Usage(...)

The server speaks four protocols, each with streaming and plain JSON:

- Anthropic Messages  `POST /v1/messages[?beta=true]`, plus `/v1/messages/count_tokens`;
- OpenAI Responses    `POST /v1/responses`;
- OpenAI Chat         `POST /v1/chat/completions` (usage chunk with `include_usage`);
- Gemini              `POST /v1beta/models/<m>:streamGenerateContent?alt=sse`,
                      `:generateContent`, `:countTokens`.

It also answers any HEAD (`/api/hello`) and GET (`/v1/models`, `/v1beta/models`) probe, and
any other POST with 204 (telemetry).

How each scripted usage tier reaches each protocol. Tiers never overlap: `input` is fresh
input, `output` is visible output without reasoning. P = input + cache_read + cache_write and
C = output + reasoning.

- Anthropic: input_tokens = input, cache_read_input_tokens = cache_read,
  cache_creation_input_tokens = cache_write, output_tokens = C,
  output_tokens_details.thinking_tokens = reasoning.
- OpenAI Responses: input_tokens = P, input_tokens_details.cached_tokens = cache_read,
  input_tokens_details.cache_write_tokens = cache_write, output_tokens = C,
  output_tokens_details.reasoning_tokens = reasoning, total_tokens = P + C.
- OpenAI Chat: prompt_tokens = P, prompt_tokens_details.cached_tokens = cache_read,
  completion_tokens = C, completion_tokens_details.reasoning_tokens = reasoning,
  total_tokens = P + C. No cache-write field, so clients see cache_write as input.
- Gemini: promptTokenCount = P, cachedContentTokenCount = cache_read,
  candidatesTokenCount = output, thoughtsTokenCount = reasoning, totalTokenCount = P + C.
  No cache-write field either.

`ModelServer.totals(protocol)` sums the usage sent in these same tiers as the client can see it
(for Chat and Gemini a cache write is counted as input), so an adapter's normalised transcript
can be compared to it exactly. Side requests report the script's `side_reply.usage` (zero unless
set) and count in the totals; overruns report zero.

See `player` for how a request is matched to a turn, `tools` for the tool vocabularies, and
`docs/model-server.md` for the file format and for pointing each CLI at the server.
"""

from __future__ import annotations

from harnessdrive.testing.model_server.recording import RecordedRequest, RequestKind, seen_usage
from harnessdrive.testing.model_server.script import (
    Action,
    EditFile,
    RawToolCall,
    Script,
    Shell,
    SideReply,
    Turn,
    Usage,
    WriteFile,
    load_script,
)
from harnessdrive.testing.model_server.server import Endpoints, ModelServer

__all__ = [
    "Action",
    "EditFile",
    "Endpoints",
    "ModelServer",
    "RawToolCall",
    "RecordedRequest",
    "RequestKind",
    "Script",
    "Shell",
    "SideReply",
    "Turn",
    "Usage",
    "WriteFile",
    "load_script",
    "seen_usage",
]
