"""A local HTTP server that plays the Hugging Face Hub endpoints a dataset push and a
``datasets.load_dataset`` of the pushed repo use (tests point ``HF_ENDPOINT`` at it).

Endpoints: whoami, repo creation, card validation (accepts any card), preupload (every file "regular": sent inline in the commit),
commit (NDJSON with base64 file contents), dataset info / revision, tree listing, paths-info and
file resolution (HEAD and GET, with the headers huggingface_hub reads). Files are kept in memory
per repo; ``commits`` counts commits per repo. A token other than ``token`` gets 401.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse

TOKEN = "hf_testtoken"


class HubState:
    def __init__(self):
        self.repos = {}      # repo_id -> {path: bytes}
        self.commits = {}    # repo_id -> number of commits
        self.log = []        # (method, path) of every request


def _sha(repo_files):
    h = hashlib.sha1()
    for k in sorted(repo_files):
        h.update(k.encode() + repo_files[k])
    return h.hexdigest()


def make_handler(state: HubState):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _send(self, code, body=b"", ctype="application/json", headers=None):
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _auth(self):
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self._send(401, {"error": "Invalid credentials in Authorization header"},
                           headers={"X-Error-Message": "Invalid credentials in Authorization header"})
                return False
            return True

        def _body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def _files_entry(self, repo, path, data):
            return {"type": "file", "path": path, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}

        def _info(self, repo):
            files = state.repos[repo]
            sha = _sha(files)
            return {"id": repo, "_id": repo, "sha": sha, "private": True, "disabled": False, "gated": False,
                    "downloads": 0, "likes": 0, "tags": [], "cardData": {}, "lastModified": "2026-01-01T00:00:00.000Z",
                    "createdAt": "2026-01-01T00:00:00.000Z",
                    "siblings": [{"rfilename": p, "size": len(d)} for p, d in sorted(files.items())]}

        def do_HEAD(self):
            self.do_GET()

        def do_GET(self):
            path = unquote(urlparse(self.path).path)
            state.log.append((self.command, path))
            if path == "/api/whoami-v2":
                return self._auth() and self._send(200, {"type": "user", "name": "tester", "auth": {}})
            m = re.match(r"^/api/datasets/([^/]+/[^/]+)(?:/revision/([^/]+))?$", path)
            if m:
                repo = m.group(1)
                if repo not in state.repos:
                    return self._send(404, {"error": "Repository not found"}, headers={"X-Error-Code": "RepoNotFound"})
                return self._send(200, self._info(repo))
            m = re.match(r"^/api/datasets/([^/]+/[^/]+)/tree/([^/]+)(?:/(.*))?$", path)
            if m:
                repo, prefix = m.group(1), (m.group(3) or "").strip("/")
                files = state.repos.get(repo, {})
                recursive = "recursive=true" in (urlparse(self.path).query or "").lower() or \
                    "recursive=1" in (urlparse(self.path).query or "")
                entries, dirs = [], set()
                for p, d in sorted(files.items()):
                    if prefix and not p.startswith(prefix + "/"):
                        continue
                    rest = p[len(prefix) + 1:] if prefix else p
                    if "/" in rest and not recursive:
                        dirs.add((prefix + "/" if prefix else "") + rest.split("/")[0])
                        continue
                    if recursive:
                        parts = rest.split("/")[:-1]
                        for i in range(len(parts)):
                            dirs.add((prefix + "/" if prefix else "") + "/".join(parts[: i + 1]))
                    entries.append(self._files_entry(repo, p, d))
                entries += [{"type": "directory", "path": d, "oid": "0" * 40, "size": 0} for d in sorted(dirs)]
                return self._send(200, entries)
            m = re.match(r"^/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.*)$", path)
            if m:
                repo, file = m.group(1), m.group(3)
                files = state.repos.get(repo, {})
                if file not in files:
                    return self._send(404, {"error": "Entry not found"}, headers={"X-Error-Code": "EntryNotFound"})
                data = files[file]
                etag = '"' + hashlib.sha1(data).hexdigest() + '"'
                return self._send(200, data, ctype="application/octet-stream",
                                  headers={"ETag": etag, "X-Repo-Commit": _sha(files)})
            return self._send(404, {"error": f"not played by tests/hub_server.py: GET {path}"})

        def do_POST(self):
            path = unquote(urlparse(self.path).path)
            state.log.append((self.command, path))
            body = self._body()
            if path == "/api/repos/create":
                if not self._auth():
                    return
                req = json.loads(body)
                repo = f"{req['organization']}/{req['name']}" if req.get("organization") else req["name"]
                if "/" not in repo:
                    repo = f"tester/{repo}"
                if repo in state.repos:
                    return self._send(409, {"error": "You already created this dataset repo",
                                            "url": f"http://{self.headers['Host']}/datasets/{repo}"})
                state.repos[repo] = {}
                state.commits[repo] = 0
                return self._send(200, {"url": f"http://{self.headers['Host']}/datasets/{repo}", "name": repo})
            if path == "/api/validate-yaml":  # the real Hub checks the card's metadata here; this one cannot
                return self._send(200, {"errors": [], "warnings": []})
            m = re.match(r"^/api/datasets/([^/]+/[^/]+)/preupload/([^/]+)$", path)
            if m:
                if not self._auth():
                    return
                req = json.loads(body)
                return self._send(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                                  for f in req["files"]], "commitOid": _sha(state.repos[m.group(1)])})
            m = re.match(r"^/api/datasets/([^/]+/[^/]+)/paths-info/([^/]+)$", path)
            if m:
                files = state.repos.get(m.group(1), {})
                raw = body.decode()
                wanted = json.loads(raw)["paths"] if raw.startswith("{") else \
                    [unquote(v) for k, v in (kv.split("=", 1) for kv in raw.split("&") if "=" in kv) if k == "paths"]
                return self._send(200, [self._files_entry(m.group(1), p, files[p]) for p in wanted if p in files])
            m = re.match(r"^/api/datasets/([^/]+/[^/]+)/commit/([^/]+)$", path)
            if m:
                if not self._auth():
                    return
                repo = m.group(1)
                for line in body.decode().splitlines():
                    item = json.loads(line)
                    if item["key"] == "file":
                        v = item["value"]
                        state.repos[repo][v["path"]] = base64.b64decode(v["content"])
                    elif item["key"] == "deletedFile":
                        state.repos[repo].pop(item["value"]["path"], None)
                state.commits[repo] += 1
                sha = _sha(state.repos[repo])
                return self._send(200, {"success": True, "commitOid": sha,
                                        "commitUrl": f"http://{self.headers['Host']}/datasets/{repo}/commit/{sha}"})
            return self._send(404, {"error": f"not played by tests/hub_server.py: POST {path}"})

    return Handler


class HubServer:
    """``with HubServer() as hub:`` serves on 127.0.0.1 (``hub.url``); ``hub.state`` holds the repos."""

    def __init__(self):
        self.state = HubState()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(self.state))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
