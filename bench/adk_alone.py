"""google-adk's ``Runner`` alone: the CPU a turn of the embedded server's agent costs with nothing
around it (no HTTP, no A2A, no store; ADK's own in-memory session service).

``bench_throughput.py`` runs this as a child process after its rounds, with the same number of
turns and users (each user chatting turn after turn in a session of its own, the users at once),
to show how much of a turn's CPU is google-adk's agent loop itself. Prints one JSON line:
``{"turns": N, "cpu_ms": M}`` (CPU per turn of the measured turns, warm-up turns not counted).

    python bench/adk_alone.py TURNS USERS
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from rewindtui.server.agent.agent import build_agent

APP, USER = "adk-alone", "bench"


async def run(turns: int, users: int) -> dict[str, float]:
    service = InMemorySessionService()
    runner = Runner(app_name=APP, agent=build_agent("demo"), session_service=service)

    async def turn(session_id: str, text: str) -> None:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
            pass

    warm = await service.create_session(app_name=APP, user_id=USER)
    for i in range(3):  # warm up, as the bench's rounds do
        await turn(warm.id, f"warm up {i}")

    async def user(u: int, count: int) -> None:
        session = await service.create_session(app_name=APP, user_id=USER)
        for i in range(count):
            await turn(session.id, f"turn {i} of user {u}")

    counts = [turns // users + (1 if u < turns % users else 0) for u in range(users)]
    before = time.process_time()
    await asyncio.gather(*(user(u, n) for u, n in enumerate(counts) if n))
    return {"turns": turns, "cpu_ms": (time.process_time() - before) * 1000 / turns}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run(int(sys.argv[1]), int(sys.argv[2])))))
