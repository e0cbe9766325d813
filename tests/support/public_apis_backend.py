"""A real HTTP backend answering like the public APIs a new user imported (petstore, Spotify, the ADR).

It serves the operations of `tests/fixtures/openapi/petstore_public.yaml` under `/api/v3`, those of
`spotify_like.yaml` under `/v1` and the contract ADR's customer endpoint under `/customers`, with
the public APIs' answer shapes (arrays, a bare string, booleans). Each API demands its bearer
token, so a test proves the gateway sends `backend.auth`; every request is kept in `seen`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

__all__ = ["PETS_TOKEN", "SPOTIFY_TOKEN", "PublicApis"]

PETS_TOKEN = "pets-test-token"
SPOTIFY_TOKEN = "spotify-test-token"
_PET = {"id": 10, "name": "doggie", "photoUrls": ["https://img.example.com/d.png"], "status": "available"}
_ALBUM = {
    "id": "4aawyAB9vmqN3uQ7FjRGTy",
    "name": "Global Warming",
    "album_type": "album",
    "release_date": "2012-11-16",
    "artists": [{"id": "0TnOYISbd1XYRBk9myaseg", "name": "Pitbull"}],
}


@dataclass
class PublicApis:
    seen: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Mount("/api/v3", routes=self._petstore()),
                Mount("/v1", routes=self._spotify()),
                Route("/customers/customers/{id}", self._customer),
            ]
        )

    def _note(self, request: Request) -> None:
        self.seen.append(
            {
                "path": request.url.path,
                "query": dict(request.query_params),
                "authorization": request.headers.get("authorization"),
                "api_key": request.headers.get("api_key"),
            }
        )

    def _guarded(self, token: str, answer: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            self._note(request)
            if request.headers.get("authorization") != f"Bearer {token}":
                return JSONResponse({"status": 401, "message": "No token provided"}, status_code=401)
            body = answer(request)
            return body if isinstance(body, Response) else JSONResponse(body)

        return endpoint

    def _petstore(self) -> list[Route]:
        def pets(path: str, answer: Any) -> Route:
            return Route(path, self._guarded(PETS_TOKEN, answer))

        def by_status(request: Request) -> list[dict[str, Any]]:
            return [{**_PET, "status": request.query_params.get("status", "available")}]

        def login(request: Request) -> str:
            return f"logged in user session:{request.query_params.get('username', '')}"

        return [
            pets("/pet/findByStatus", by_status),
            pets("/pet/findByTags", lambda r: []),
            pets("/pet/{petId}", lambda r: {**_PET, "id": int(r.path_params["petId"])}),
            pets("/store/inventory", lambda r: {"available": 7, "sold": 2}),
            pets("/user/login", login),
            pets("/user/logout", lambda r: Response(status_code=200)),
            pets("/user/{username}", lambda r: {"id": 1, "username": r.path_params["username"]}),
        ]

    def _spotify(self) -> list[Route]:
        def spotify(path: str, answer: Any) -> Route:
            return Route(path, self._guarded(SPOTIFY_TOKEN, answer))

        def booleans(request: Request) -> list[bool]:
            ids = [i for i in request.query_params.get("ids", "").split(",") if i]
            return [index % 2 == 0 for index in range(len(ids) or 1)]

        return [
            spotify("/albums/{id}", lambda r: {**_ALBUM, "id": r.path_params["id"]}),
            spotify("/albums", lambda r: {"albums": [_ALBUM]}),
            spotify("/me/albums/contains", booleans),
            spotify("/me/tracks/contains", booleans),
            spotify("/me/following/contains", booleans),
            spotify("/playlists/{playlist_id}/followers/contains", booleans),
            spotify("/markets", lambda r: {"markets": ["ES", "FR", "JP"]}),
            spotify("/recommendations/available-genre-seeds", lambda r: {"genres": ["acoustic"]}),
            spotify("/me/player/devices", lambda r: {"devices": []}),
        ]

    async def _customer(self, request: Request) -> Response:
        self._note(request)
        return JSONResponse({"id": request.path_params["id"], "name": "Ada Example", "tier": "gold"})
