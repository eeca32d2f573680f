"""The page ``rewindtui web`` serves names itself in a ``<title>`` (textual-serve's own page has
none, so a browser tab showed its address). Real aiohttp server on loopback, textual-serve's page."""

from __future__ import annotations

import aiohttp
from aiohttp.test_utils import TestServer

from rewindtui.cli.web import make_server, with_title


def test_with_title_escapes_and_keeps_a_title_there_is():
    page = "<html><head><meta x></head><body></body></html>"
    assert "<title>a &lt;b&gt; &amp; c</title>" in with_title(page, "a <b> & c")
    titled = "<html><head><title>mine</title></head></html>"
    assert with_title(titled, "other") == titled


async def test_the_served_page_has_a_title():
    server = make_server("true", "127.0.0.1", 0, None, title="rewindtui · demo")
    app = await server._make_app()
    test_server = TestServer(app, host="127.0.0.1")
    await test_server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(test_server.make_url("/"), headers={"Host": "127.0.0.1"}) as response:
                page = await response.text()
        assert response.status == 200
        assert "<title>rewindtui · demo</title>" in page
        assert page.index("<title>") < page.index("</head>")
    finally:
        await test_server.close()
