"""The API declares no shape a second time (issue 29): its answers are the service's views
(dataclasses, read by pydantic for the OpenAPI document: arena.service.shapes), so the
API's modules declare pydantic models for what a request sends only, and no model of theirs
copies the fields of a view of the service or the store."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import pkgutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import ModuleType
from typing import Any, get_type_hints

from flask import Flask
from pydantic import BaseModel, TypeAdapter
from spectree import SpecTree

import arena.service
import arena.store
import web
from arena.service.display import BotName
from arena.service.shapes import ELO, HIDDEN, about, extend, plain
from web.api import ApiError, LazySpecTree, ViewSchema
from web.api_assignments import AssignmentCreate

#: The API's modules: web.api and its parts.
API_MODULES = [
    importlib.import_module(info.name)
    for info in pkgutil.iter_modules(web.__path__, prefix="web.")
    if info.name.rpartition(".")[2].startswith("api")
]
#: The parameters through which spectree hands an endpoint what its request sent.
REQUEST_PARAMETERS = ("query", "json", "form")
#: Requests whose fields are a view's but whose shape is not: an assignment's body has no
#: class (its path names it) and no seed, and its grades are objects, not pairs.
UNLIKE = {AssignmentCreate}


def _modules(package: ModuleType) -> list[ModuleType]:
    return [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + ".")
        if ".migrations" not in info.name
    ]


def _declared(module: ModuleType) -> list[type]:
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type) and value.__module__ == module.__name__
    ]


def _fields(cls: type) -> frozenset[str]:
    """The names of a pydantic model's or a dataclass's fields (else none)."""
    if issubclass(cls, BaseModel):
        return frozenset(cls.model_fields)
    if dataclasses.is_dataclass(cls):
        return frozenset(f.name for f in dataclasses.fields(cls))
    return frozenset()


def _requests() -> set[Any]:
    """The models of what the API's endpoints are sent (their query, JSON or form)."""
    found = set()
    for module in API_MODULES:
        for function in vars(module).values():
            if inspect.isfunction(function) and function.__module__ == module.__name__:
                hints = get_type_hints(inspect.unwrap(function))
                found |= {hints[p] for p in REQUEST_PARAMETERS if p in hints}
    return found


def test_the_api_declares_pydantic_models_for_requests_only() -> None:
    """An answer is a view (a dataclass): a pydantic model in web.api* is a request's (or
    the error's body)."""
    requests = _requests()
    answers = [
        f"{module.__name__}.{cls.__qualname__}"
        for module in API_MODULES
        for cls in _declared(module)
        if issubclass(cls, BaseModel)
        and cls is not ApiError
        and not any(isinstance(r, type) and issubclass(r, cls) for r in requests)
    ]
    assert requests, "no endpoint takes a request model: the check reads nothing"
    assert not answers, f"pydantic models that no request uses: {answers}"


def test_no_api_model_copies_a_views_fields() -> None:
    """A model declared in web.api* (a pydantic model or a dataclass) whose fields, three or
    more, are all fields of one dataclass of the service or the store is that view declared
    twice (a subclass adding a field, such as a URL, inherits; it copies nothing)."""
    views = {
        cls: _fields(cls)
        for package in (arena.service, arena.store)
        for module in _modules(package)
        for cls in _declared(module)
        if dataclasses.is_dataclass(cls)
    }
    copies = [
        f"{module.__name__}.{cls.__qualname__} copies {view.__module__}.{view.__qualname__}"
        for module in API_MODULES
        for cls in _declared(module)
        if len(mine := _fields(cls)) >= 3
        and cls not in UNLIKE
        and not any(issubclass(cls, view) for view in views)
        for view, theirs in views.items()
        if mine <= theirs
    ]
    assert len(views) > 50, "the service's and the store's dataclasses were not found"
    assert not copies, "\n".join(copies)


# --- a view as JSON (arena.service.shapes), as plain() writes it and pydantic documents it --


@dataclass(frozen=True, slots=True)
class Row:
    match_id: int = field(metadata=about("its match", name="match"))
    rating: float | None = field(metadata=ELO)
    score: float = field(metadata=about(digits=3))
    when: datetime
    seats: tuple[str, ...]
    name: BotName
    owner_id: int = field(metadata=HIDDEN)


@dataclass(frozen=True, slots=True)
class Linked(Row):
    url: str = ""


ROW = Row(
    match_id=7,
    rating=1523.456,
    score=float("inf"),
    when=datetime(2026, 5, 1, 18, 0, 0, 5, tzinfo=UTC),
    seats=("a", "b"),
    name=BotName("ada", "greedy", 2),
    owner_id=3,
)


def test_plain_writes_a_view_by_its_fields_metadata() -> None:
    assert plain(ROW) == {
        "match": 7,
        "rating": 1523.5,
        "score": None,  # an infinity, which JSON lacks
        "when": "2026-05-01T18:00:00.000005+00:00",
        "seats": ["a", "b"],
        "name": "ada/greedy v2",
    }
    assert json.loads(json.dumps(plain([ROW, None]))) == [plain(ROW), None]


def test_the_schema_says_what_plain_writes() -> None:
    schema = TypeAdapter(Row).json_schema(mode="serialization", schema_generator=ViewSchema)
    assert set(schema["properties"]) == set(plain(ROW)) == set(schema["required"])
    assert schema["properties"]["match"]["description"] == "its match"
    name = schema["properties"]["name"]
    assert schema["$defs"][name["$ref"].rpartition("/")[2]] == {"type": "string"}
    assert "description" not in schema  # the service's docstring is not the API's


def test_extend_makes_an_answer_of_a_view() -> None:
    linked = extend(ROW, Linked, url="/x")
    assert isinstance(linked, Linked) and plain(linked) == {**plain(ROW), "url": "/x"}


class _Query(BaseModel):
    limit: int = 10


def test_the_documents_schemas_are_built_when_it_is_first_asked_for() -> None:
    """web.api's spectree names a route's models when the route is declared and builds
    their schemas (pydantic's: a second of CPU for the API's) on the document's first
    request, not at import; the document is the one spectree builds at once."""
    lazy, eager = LazySpecTree("flask", path="spec"), SpecTree("flask", path="spec")
    apps = []
    for spectree in (lazy, eager):
        app = Flask(__name__)

        @app.get("/read")
        @spectree.validate(query=_Query)
        def read(query: _Query) -> str:
            return str(query.limit)

        apps.append(app)
    assert lazy.models == {} and eager.models
    for spectree, app in zip((lazy, eager), apps, strict=True):
        spectree.register(app)
    documents = []
    for spectree, app in zip((lazy, eager), apps, strict=True):
        with app.app_context():
            documents.append(spectree.spec)
    assert documents[0] == documents[1] and "_Query" in str(documents[0]["components"])
    assert apps[0].test_client().get("/read?limit=3").get_data(as_text=True) == "3"
