"""The Python client against a registry server this test starts (node bin/tool-registry.js serve).

Run: python3 -m unittest discover -s clients/python/tests -v
The server uses an in-memory embedded database, or REGISTRY_TEST_DATABASE_URL when set (the
repository's vitest wrapper passes each wire-protocol database leg).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import unittest
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
REPO = HERE.parent.parent.parent

from tool_registry_client import RegistryClient, RegistryError, __version__, parse_retry_after  # noqa: E402

SECRET = "python-client-test-secret-0123456789abcdef"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def mint(tenant: str, scopes: List[str], sub: str = "py-test") -> str:
    """An HS256 JWT the server accepts (JWT_SECRET=SECRET)."""
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    now = int(time.time())
    claims = b64(json.dumps({"tenant_id": tenant, "scope": " ".join(scopes), "sub": sub, "iat": now, "exp": now + 600}).encode())
    signature = b64(hmac.new(SECRET.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest())
    return f"{header}.{claims}.{signature}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tool(name: str = "issue_refund", **overrides: Any) -> Dict[str, Any]:
    doc: Dict[str, Any] = {
        "name": name,
        "version": "1.0.0",
        "description": "Refund a paid invoice in full or in part.",
        "not_for": "Not for cancelling unpaid orders; use cancel_order.",
        "tags": ["billing"],
        "category": "billing",
        "side_effects": True,
        "parameters": {
            "type": "object",
            "properties": {"invoice_id": {"type": "string", "description": "Invoice to refund"}, "amount": {"type": "number", "minimum": 0, "description": "Amount"}},
            "required": ["invoice_id"],
            "additionalProperties": False,
        },
    }
    doc.update(overrides)
    return doc


class LiveRegistry(unittest.TestCase):
    server: subprocess.Popen
    url: str

    @classmethod
    def setUpClass(cls) -> None:
        port = free_port()
        env = {**os.environ, "PORT": str(port), "HOST": "127.0.0.1", "JWT_SECRET": SECRET, "EMBEDDING_PROVIDER": "none", "LOG_LEVEL": "warn", "DATA_DIR": "memory://"}
        database = os.environ.get("REGISTRY_TEST_DATABASE_URL")
        if database:
            env.update({"DATABASE_URL": database, "DATABASE_POOL_SIZE": "3"})
        cls.server = subprocess.Popen([os.environ.get("NODE", "node"), str(REPO / "bin" / "tool-registry.js"), "serve"], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        cls.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if cls.server.poll() is not None:
                raise RuntimeError(f"the registry exited: {cls.server.stderr.read().decode() if cls.server.stderr else ''}")
            try:
                with urllib.request.urlopen(f"{cls.url}/readyz", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        cls.tearDownClass()
        raise RuntimeError("the registry did not become ready in 90 s")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.terminate()
        try:
            cls.server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            cls.server.kill()
            cls.server.wait()
        if cls.server.stderr:
            cls.server.stderr.close()

    def client(self, tenant: str, scopes: Optional[List[str]] = None, **options: Any) -> RegistryClient:
        return RegistryClient(self.url, mint(tenant, scopes if scopes is not None else ["registry:publish"]), **options)

    def tenant(self) -> str:
        return f"py-{uuid.uuid4().hex[:10]}"

    def test_publishes_reads_lists_and_retires_with_etags(self) -> None:
        client = self.client(self.tenant())
        created = client.create_tool(tool())
        self.assertEqual(created["tool"]["revision"], 1)
        self.assertTrue(created["etag"].startswith('"1-'))
        client.create_tool(tool("get_invoice", side_effects=False))
        self.assertEqual([card["name"] for card in client.iter_tools(limit=1)], ["get_invoice", "issue_refund"])
        read = client.get_tool("issue_refund")
        self.assertEqual(read["etag"], created["etag"])
        self.assertEqual(read["tool"]["index_status"], "indexed")
        self.assertEqual(client.wait_for_index("issue_refund", timeout=5), "indexed")
        self.assertIsNone(client.find_tool("nothing_here"))
        updated = client.update_tool("issue_refund", tool(version="1.1.0", description="Refund a paid invoice, fully or partly."), if_match=read["etag"])
        self.assertEqual(updated["tool"]["version"], "1.1.0")
        with self.assertRaises(RegistryError) as stale:
            client.update_tool("issue_refund", tool(version="1.2.0"), if_match=read["etag"])
        self.assertEqual((stale.exception.status, stale.exception.code), (412, "precondition_failed"))
        self.assertEqual([v["version"] for v in client.list_versions("issue_refund")], ["1.0.0", "1.1.0"])
        retired = client.retire_tool("issue_refund")
        self.assertEqual(retired["tool"]["status"], "retired")

    def test_dry_runs_store_nothing_and_give_the_real_errors_with_pointers(self) -> None:
        client = self.client(self.tenant())
        plan = client.dry_run_create(tool())
        self.assertEqual((plan["dry_run"], plan["outcome"]), (True, "created"))
        self.assertIsNone(client.find_tool("issue_refund"))
        current = client.create_tool(tool())
        update = client.dry_run_update("issue_refund", tool(version="1.1.0", tags=["billing", "refunds"]), if_match=current["etag"])
        self.assertEqual((update["outcome"], update["changes"]), ("updated", ["tags", "version"]))
        with self.assertRaises(RegistryError) as conflict:
            client.dry_run_update("issue_refund", tool(description="Changed without a new version."))
        self.assertEqual(conflict.exception.status, 409)
        self.assertEqual(conflict.exception.details, [{"pointer": "/version", "message": "must be greater than 1.0.0"}])
        with self.assertRaises(RegistryError) as invalid:
            client.create_tool(tool("typo", parameters={"type": "object", "properties": {"n": {"type": "integer", "minimun": 1}}}))
        self.assertEqual(invalid.exception.code, "validation_failed")
        self.assertEqual([d["pointer"] for d in invalid.exception.details], ["/parameters/properties/n/minimun"])
        self.assertIn("/parameters/properties/n/minimun", str(invalid.exception))
        self.assertEqual(client.get_tool("issue_refund")["tool"]["version"], "1.0.0")

    def test_discovers_in_every_format_and_authorizes(self) -> None:
        tenant = self.tenant()
        self.client(tenant).create_tool(tool())
        agent = self.client(tenant, [])
        anthropic = agent.discover("refund invoice", top_k=2, format="anthropic")
        schema = anthropic["tools"][0]["schema"]
        self.assertEqual(schema["name"], "issue_refund")
        self.assertIn("input_schema", schema)
        self.assertTrue(schema["description"].endswith("Not for cancelling unpaid orders; use cancel_order."))
        self.assertEqual(agent.discover("refund invoice", format="gemini")["tools"][0]["schema"]["parametersJsonSchema"]["type"], "object")
        self.assertEqual(agent.discover("refund invoice", format="openai-responses")["tools"][0]["schema"]["strict"], False)
        allow = agent.authorize("issue_refund", {"invoice_id": "inv_1"}, discovery_id=anthropic["discovery_id"])
        self.assertEqual(allow, {"decision": "allow", "reasons": [], "tool": {"name": "issue_refund", "version": "1.0.0"}})
        deny = agent.authorize("issue_refund", {"amount": -1})
        self.assertEqual(deny["decision"], "deny")
        self.assertTrue(all(r["code"] == "invalid_arguments" for r in deny["reasons"]))

    def test_errors_say_auth_and_network_apart(self) -> None:
        with self.assertRaises(RegistryError) as refused:
            RegistryClient(self.url, "not-a-token", retries=0).list_tools()
        self.assertEqual((refused.exception.status, refused.exception.auth, refused.exception.transient), (401, True, False))
        with self.assertRaises(RegistryError) as forbidden:
            self.client(self.tenant(), []).create_tool(tool())
        self.assertEqual((forbidden.exception.status, forbidden.exception.code), (403, "forbidden"))
        with self.assertRaises(RegistryError) as away:
            RegistryClient(f"http://127.0.0.1:{free_port()}", "t", retries=0).health()
        self.assertEqual((away.exception.status, away.exception.code, away.exception.transient), (0, "network_error", True))
        self.assertTrue(self.client(self.tenant()).ready()["ready"])


class Scripted(http.server.BaseHTTPRequestHandler):
    """Answers each request with the next scripted (status, headers, body); records what it saw."""

    script: List[Any] = []
    seen: List[Dict[str, Optional[str]]] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        Scripted.seen.append({"user-agent": self.headers.get("user-agent"), "authorization": self.headers.get("authorization")})
        status, headers, body = Scripted.script.pop(0)
        self.send_response(status)
        for key, value in {"content-type": "application/json", **headers}.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(json.dumps(body).encode())

    def log_message(self, *args: Any) -> None:
        pass


class Transport(unittest.TestCase):
    def setUp(self) -> None:
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        Scripted.seen = []

    def tearDown(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def test_retries_408_429_and_5xx_honouring_retry_after(self) -> None:
        error = {"error": {"code": "unavailable", "message": "later", "details": [], "request_id": "r"}}
        Scripted.script = [(408, {}, error), (429, {"retry-after": "2"}, error), (503, {}, error), (200, {}, {"status": "ok"})]
        delays: List[float] = []
        client = RegistryClient(self.url, "t", retries=3, backoff=0.01, sleep=delays.append)
        self.assertEqual(client.health(), {"status": "ok"})
        self.assertEqual(len(delays), 3)
        self.assertEqual(delays[1], 2.0)

    def test_gives_up_with_a_typed_error_and_never_retries_client_errors(self) -> None:
        Scripted.script = [(409, {}, {"error": {"code": "conflict", "message": "exists", "details": [], "request_id": "r9"}})]
        with self.assertRaises(RegistryError) as caught:
            RegistryClient(self.url, "t", sleep=lambda _: None).health()
        self.assertEqual((caught.exception.code, caught.exception.request_id, len(Scripted.seen)), ("conflict", "r9", 1))

    def test_reads_the_environment_and_sends_a_user_agent(self) -> None:
        Scripted.script = [(200, {}, {"status": "ok"})]
        saved = {k: os.environ.get(k) for k in ("REGISTRY_URL", "REGISTRY_TOKEN")}
        os.environ.update({"REGISTRY_URL": self.url, "REGISTRY_TOKEN": "env-token"})
        try:
            client = RegistryClient(user_agent="my-gateway/2.1")
            client.health()
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        self.assertEqual(client.base_url, self.url)
        self.assertEqual(Scripted.seen[0]["authorization"], "Bearer env-token")
        self.assertTrue((Scripted.seen[0]["user-agent"] or "").startswith(f"my-gateway/2.1 tool-registry-client-python/{__version__} python/"))

    def test_parses_retry_after(self) -> None:
        self.assertEqual(parse_retry_after("3"), 3.0)
        self.assertEqual(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0), 10.0)
        self.assertIsNone(parse_retry_after("soon"))


if __name__ == "__main__":
    unittest.main()
