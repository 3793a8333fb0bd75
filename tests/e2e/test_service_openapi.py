"""GET /v1/openapi.json describes what `simdup serve` does: every documented route answers
with a documented status and a body of the documented schema, and every other method on a
documented path is 405 with an Allow header naming exactly the documented ones."""

import json

import pytest

from service_harness import SOURCE_DIR, Server

METHODS = ("GET", "PUT", "POST", "DELETE", "PATCH")


@pytest.fixture
def server(tmp_path):
    s = Server(["--data", str(tmp_path / "db"), "--export-dir", str(tmp_path / "exports")])
    yield s
    s.close()


def resolve(spec, schema):
    while "$ref" in schema:
        node = spec
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def errors(spec, schema, value, where="$"):
    """What in `value` does not fit `schema` (the subset of JSON Schema the document uses)."""
    schema = resolve(spec, schema)
    if value is None:
        return [] if schema.get("nullable") else [f"{where}: null"]
    if "oneOf" in schema:
        fits = [s for s in schema["oneOf"] if not errors(spec, s, value, where)]
        return [] if len(fits) == 1 else [f"{where}: fits {len(fits)} of oneOf"]
    if "allOf" in schema:
        return [e for s in schema["allOf"] for e in errors(spec, s, value, where)]
    out = []
    kind = schema.get("type")
    checks = {"object": dict, "array": list, "string": str, "boolean": bool}
    if kind in ("integer", "number"):
        numeric = int if kind == "integer" else (int, float)
        if isinstance(value, bool) or not isinstance(value, numeric):
            return [f"{where}: {value!r} is not of type {kind}"]
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{where}: below minimum")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{where}: above maximum")
    elif kind in checks and not isinstance(value, checks[kind]):
        return [f"{where}: {value!r} is not a {kind}"]
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} not in {schema['enum']}")
    if kind == "string" and "pattern" in schema:
        import re
        if not re.search(schema["pattern"], value):
            out.append(f"{where}: {value!r} does not match {schema['pattern']}")
    if kind == "object":
        for name in schema.get("required", ()):
            if name not in value:
                out.append(f"{where}: missing {name}")
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                out += errors(spec, sub, value[name], f"{where}.{name}")
    if kind == "array":
        for i, item in enumerate(value):
            out += errors(spec, schema["items"], item, f"{where}[{i}]")
    return out


def request_for(path, method):
    """A valid request for a documented route: (concrete path, body)."""
    concrete = path.replace("{collection}", "news").replace("{id}", "doc%2F1")
    body = None
    if method == "POST" and path.endswith("/export"):
        body = {"name": "documented"}
    elif method == "POST":
        body = {"documents": [{"id": "doc/1", "text": "the documented routes are checked "
                               "against the server one by one"},
                              {"id": "doc/2", "fingerprint": 12345}]}
    elif method == "PUT":
        body = {"k": 3, "window": "0"}
    return concrete, body


def test_served_description_is_the_documented_one(server):
    c = server.client()
    status, served = c.request("GET", "/v1/openapi.json")
    assert status == 200
    assert served == json.loads((SOURCE_DIR / "docs" / "openapi.json").read_text())
    assert served["openapi"].startswith("3.")


def test_every_documented_route_matches_the_server(server):
    c = server.client()
    spec = c.request("GET", "/v1/openapi.json")[1]
    assert c.request("PUT", "/v1/news", {"k": 3, "window": "0"})[0] == 200
    assert c.post("/v1/news/insert", {"id": "doc/1", "fingerprint": "00000000000000ff"})[0] == 200
    routes = [(path, method.upper(), op) for path, item in spec["paths"].items()
              for method, op in item.items() if method.upper() in METHODS]
    # Deletions last, the collection's own last of all.
    routes.sort(key=lambda r: (r[1] == "DELETE", r[0] == "/v1/{collection}"))
    assert len(routes) >= 12
    for path, method, op in routes:
        concrete, body = request_for(path, method)
        status, answer = c.request(method, concrete, body)
        where = f"{method} {path}"
        assert str(status) in op["responses"], f"{where}: {status} is not documented: {answer}"
        assert status == 200, f"{where}: {status} {answer}"
        content = op["responses"]["200"]["content"]
        if "application/json" in content:
            problems = errors(spec, content["application/json"]["schema"], answer)
            assert not problems, f"{where}: {problems}"
        else:
            assert isinstance(answer, str) and answer
    # The documented error answers fit the Error schema, with the documented statuses.
    status, answer = c.request("GET", "/v1/missing/stats")
    assert status == 404 and not errors(spec, {"$ref": "#/components/schemas/Error"}, answer)
    status, answer = c.request("POST", "/v1/missing/check", raw="{")
    assert status in (400, 404)
    assert not errors(spec, {"$ref": "#/components/schemas/Error"}, answer)


def test_undocumented_methods_are_405_with_the_documented_allow(server):
    c = server.client()
    spec = c.request("GET", "/v1/openapi.json")[1]
    assert c.request("PUT", "/v1/news", {})[0] == 200
    for path, item in spec["paths"].items():
        documented = {m.upper() for m in item if m.upper() in METHODS}
        concrete, _ = request_for(path, "GET")
        for method in set(METHODS) - documented:
            c.conn.request(method, concrete, body=b"{}",
                           headers={"Content-Type": "application/json"})
            resp = c.conn.getresponse()
            resp.read()
            assert resp.status == 405, f"{method} {path}: {resp.status}"
            allow = {m.strip() for m in resp.getheader("Allow", "").split(",")}
            assert allow == documented, f"{method} {path}: Allow {allow} != {documented}"
