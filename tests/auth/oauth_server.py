"""A small OAuth 2 / OIDC authorization server for tests, built on Authlib's framework-neutral
``AuthorizationServer`` and its grants (the Flask/Django integrations do the same; this file is
the thin Starlette glue plus in-memory storage, as Authlib's docs ask a framework integration to
provide):

- ``POST /token``: Authlib's ``ClientCredentialsGrant``, ``DeviceCodeGrant`` (RFC 8628) and
  ``RefreshTokenGrant`` (rotating refresh tokens).
- ``POST /device_authorization``: Authlib's ``DeviceAuthorizationEndpoint``.
- ``POST /revoke``: Authlib's ``RevocationEndpoint`` (RFC 7009).
- ``GET /.well-known/openid-configuration``: the discovery document naming them.
- ``POST /activate``: the user approving (or denying) a user code, as the verification page
  would after the user signed in there.

:meth:`AuthServer.valid` answers whether an access token may be used (issued, not expired, not
revoked): the protected agent in the tests asks it.
"""

from __future__ import annotations

import os
import time
from typing import Any

from authlib.oauth2.rfc6749 import AuthorizationServer, ClientMixin, OAuth2Request, TokenMixin
from authlib.oauth2.rfc6749.grants import ClientCredentialsGrant, RefreshTokenGrant
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc8628 import DeviceAuthorizationEndpoint, DeviceCodeGrant, DeviceCredentialDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")  # loopback http in tests


class Client(ClientMixin):
    def __init__(self, client_id: str, secret: str | None, grants: tuple[str, ...]) -> None:
        self.client_id, self.secret, self.grants = client_id, secret, grants

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return None

    def get_allowed_scope(self, scope: str | None) -> str:
        return scope or ""

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return False

    def check_client_secret(self, client_secret: str) -> bool:
        return self.secret is not None and client_secret == self.secret

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "none" if self.secret is None else method.startswith("client_secret_")

    def check_response_type(self, response_type: str) -> bool:
        return False

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grants


class Token(dict, TokenMixin):  # type: ignore[type-arg]
    def check_client(self, client: Any) -> bool:
        return self["client_id"] == client.get_client_id()

    def get_scope(self) -> str:
        return self.get("scope", "")

    def get_expires_in(self) -> int:
        return int(self["expires_in"])

    def is_expired(self) -> bool:
        return time.time() >= self["issued_at"] + self["expires_in"]

    def is_revoked(self) -> bool:
        return bool(self.get("revoked"))


class StarletteRequest(OAuth2Request):
    def __init__(self, method: str, url: str, headers: Any, form: dict[str, str]) -> None:
        super().__init__(method, url, headers=headers)
        self._form = form
        self.payload = BasicOAuth2Payload(form)

    @property
    def args(self) -> dict[str, str]:
        return {}

    @property
    def form(self) -> dict[str, str]:
        return self._form


class AuthServer(AuthorizationServer):
    def __init__(self, base: str, expires_in: int = 3600, client_auth: str = "client_secret_basic") -> None:
        super().__init__()
        self.base = base
        self.client_auth = client_auth  # how confidential clients authenticate (basic or post)
        self.clients: dict[str, Client] = {}
        self.tokens: list[Token] = []
        self.devices: dict[str, DeviceCredentialDict] = {}
        self.grants_by_user_code: dict[str, tuple[str, bool]] = {}
        self.seen: list[tuple[str, dict[str, str], str | None]] = []  # (path, form, Authorization)
        self.register_token_generator(
            "default",
            BearerTokenGenerator(
                lambda *a, **k: os.urandom(16).hex(), lambda *a, **k: os.urandom(16).hex(), lambda *a, **k: expires_in
            ),
        )
        outer = self

        class Device(DeviceCodeGrant):
            def query_device_credential(self, device_code: str) -> Any:
                return outer.devices.get(device_code)

            def query_user_grant(self, user_code: str) -> Any:
                return outer.grants_by_user_code.get(user_code)

            def should_slow_down(self, credential: Any) -> bool:
                return False

        class DeviceEndpoint(DeviceAuthorizationEndpoint):
            USER_CODE_TYPE = "string"
            EXPIRES_IN = 120
            INTERVAL = 0  # tests poll at once

            def get_verification_uri(self) -> str:
                return outer.base + "/activate"

            def save_device_credential(self, client_id: str, scope: str, data: dict[str, Any]) -> None:
                outer.devices[data["device_code"]] = DeviceCredentialDict(
                    client_id=client_id, scope=scope, expires_at=time.time() + 120, **data
                )

        class Refresh(RefreshTokenGrant):
            INCLUDE_NEW_REFRESH_TOKEN = True
            TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "none"]  # public clients refresh too

            def authenticate_refresh_token(self, refresh_token: str) -> Any:
                for token in outer.tokens:
                    if token.get("refresh_token") == refresh_token and not token.is_revoked():
                        return token
                return None

            def authenticate_user(self, refresh_token: Any) -> Any:
                return refresh_token.get("user", "someone")

            def revoke_old_credential(self, refresh_token: Any) -> None:
                refresh_token["revoked"] = True

        class Revocation(RevocationEndpoint):
            CLIENT_AUTH_METHODS = ["client_secret_basic", "none"]

            def query_token(self, token_string: str, token_type_hint: str | None) -> Any:
                for token in outer.tokens:
                    if token_string in (token.get("access_token"), token.get("refresh_token")):
                        return token
                return None

            def revoke_token(self, token: Any, request: Any) -> None:
                token["revoked"] = True

        class Credentials(ClientCredentialsGrant):
            TOKEN_ENDPOINT_AUTH_METHODS = [client_auth]

        self.register_grant(Credentials)
        self.register_grant(Device)
        self.register_grant(Refresh)
        self.register_endpoint(DeviceEndpoint)
        self.register_endpoint(Revocation)

    # -- Authlib's framework hooks ---------------------------------------------------------------
    def query_client(self, client_id: str) -> Client | None:
        return self.clients.get(client_id)

    def save_token(self, token: dict[str, Any], request: Any) -> None:
        user = getattr(request, "user", None)
        self.tokens.append(Token(token, client_id=request.client.get_client_id(), issued_at=time.time(), user=user))

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        return request

    def handle_response(self, status: int, body: Any, headers: Any) -> Response:
        return JSONResponse(body, status_code=status, headers=dict(headers))

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass

    # -- for the tests ------------------------------------------------------------------------------
    def valid(self, access_token: str) -> bool:
        return any(
            t.get("access_token") == access_token and not t.is_expired() and not t.is_revoked() for t in self.tokens
        )

    def approve(self, user_code: str, allow: bool = True) -> None:
        self.grants_by_user_code[user_code] = ("someone", allow)

    def grant_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for path, form, _ in self.seen:
            if path == "/token":
                counts[form.get("grant_type", "")] = counts.get(form.get("grant_type", ""), 0) + 1
        return counts

    def app(self) -> Starlette:
        async def oauth_request(request: Request) -> StarletteRequest:
            form = {k: str(v) for k, v in (await request.form()).items()}
            self.seen.append((request.url.path, form, request.headers.get("authorization")))
            return StarletteRequest(request.method, str(request.url), request.headers, form)

        async def token(request: Request) -> Response:
            return self.create_token_response(await oauth_request(request))

        async def device(request: Request) -> Response:
            return self.create_endpoint_response("device_authorization", await oauth_request(request))

        async def revoke(request: Request) -> Response:
            return self.create_endpoint_response("revocation", await oauth_request(request))

        async def discovery(request: Request) -> Response:
            self.seen.append((request.url.path, {}, request.headers.get("authorization")))
            return JSONResponse(
                {
                    "issuer": self.base,
                    "token_endpoint": self.base + "/token",
                    "device_authorization_endpoint": self.base + "/device_authorization",
                    "revocation_endpoint": self.base + "/revoke",
                    "grant_types_supported": [
                        "client_credentials",
                        "refresh_token",
                        "urn:ietf:params:oauth:grant-type:device_code",
                    ],
                    "token_endpoint_auth_methods_supported": [self.client_auth, "none"],
                }
            )

        async def activate(request: Request) -> Response:  # the verification page, after the user signed in
            form = await request.form()
            self.approve(str(form["user_code"]), form.get("deny") is None)
            return JSONResponse({})

        return Starlette(
            routes=[
                Route("/token", token, methods=["POST"]),
                Route("/device_authorization", device, methods=["POST"]),
                Route("/revoke", revoke, methods=["POST"]),
                Route("/.well-known/openid-configuration", discovery),
                Route("/activate", activate, methods=["POST"]),
            ]
        )
