"""测试器材：127.0.0.1 上的一个假“搜索接口”，按博查、Brave、Google、Tavily 各自的格式回话（第 07 课）。

它不联网，也不真的搜索：从 checks/web_pages.json 的 41 个写死的网页里挑出和问题有相同字词的，按吩咐的格式和故障回答。
检查里这样用：
    with StandInSearch() as server:
        server.fault("429", retry_after=1)     # 先回一次 429，再正常回答
        ……把 SEARCH_API_URL 设成 server.url、SEARCH_PROVIDER 设成 server.provider，运行程序……
        server.requests                         # 收到的每个请求：method、path、query、headers、body
第 07 课让学生在另一个终端里运行它：
    $ python3 checks/stand_in_search.py                        # 博查的格式，开在 127.0.0.1:8765，Ctrl-C 停下
    $ python3 checks/stand_in_search.py --provider brave       # 换成 brave、google、tavily 的格式
    $ python3 checks/stand_in_search.py --port 8766            # 8765 被占用时换一个端口
"""
import json
import sys
import time
import urllib.parse
from pathlib import Path

from kit_helpers import parse_tool_options, run_tool
from stand_in_model import LoopbackServer, QuietHandler

# 写死的网页：三个虚构的题目（记得笔记、青川市图书馆、东岭铁路）的官网页、转载、过时的页、论坛的错话、垃圾页、藏着指令的页，
# 由没看过程序的人写成（checks/web_pages.json）。发出去之前再按各家接口的格式改名（见 shaped）。
PAGES = json.loads((Path(__file__).parent / "web_pages.json").read_text(encoding="utf-8"))
PROVIDERS = ("bocha", "brave", "google", "tavily")
GIVE_UP_AFTER = 5.0   # “装死”最多持续这么久，即使检查忘了关它，也会自己停下


def matching(query, count):
    """含有问题里任意两个相邻汉字（或一个英文词）的网页，按命中多少排序，最多 count 条。"""
    text = urllib.parse.unquote(query)
    pieces = {text[i:i + 2] for i in range(len(text) - 1)} | set(text.lower().split())
    scored = [(sum(piece in page["title"] + page["snippet"] for piece in pieces), index) for index, page in enumerate(PAGES)]
    return [PAGES[index] for score, index in sorted(scored, key=lambda item: (-item[0], item[1])) if score][:count]


def shaped(provider, pages):
    """把统一写法的网页改成这家接口的格式（字段名来自各家的文档，见第 07 课）。"""
    if provider == "bocha":
        value = [{"id": f"https://api.bochaai.com/v1/#WebPages.{i}", "name": p["title"], "url": p["url"],
                  "displayUrl": p["url"], "snippet": p["snippet"][:40], "summary": p["snippet"], "siteName": "",
                  "datePublished": p["published"] and p["published"] + "T08:00:00+08:00"} for i, p in enumerate(pages)]
        data = {"_type": "SearchResponse", "queryContext": {}}
        if value:   # 博查自己的代码把没有 webPages 当作“没有结果”
            data["webPages"] = {"webSearchUrl": "", "totalEstimatedMatches": len(value), "value": value}
        return {"code": 200, "msg": None, "data": data}
    if provider == "brave":
        results = [{"title": p["title"], "url": p["url"], "description": p["snippet"],
                    "page_age": p["published"] and p["published"] + "T08:00:00"} for p in pages]
        return {"type": "search", **({"web": {"type": "search", "results": results}} if results else {})}
    if provider == "google":
        items = [{"kind": "customsearch#result", "title": p["title"], "link": p["url"], "snippet": p["snippet"],
                  "displayLink": urllib.parse.urlsplit(p["url"]).netloc} for p in pages]
        return {"kind": "customsearch#search", **({"items": items} if items else {})}
    return {"query": "", "results": [{"title": p["title"], "url": p["url"], "content": p["snippet"], "score": 0.5,
                                      **({"published_date": p["published"]} if p["published"] else {})} for p in pages]}


class StandInSearch(LoopbackServer):
    PATH = "/search"

    def __init__(self, provider="bocha", port=0):
        super().__init__(port)
        self.provider = provider
        self.faults = []   # 排队的故障：每个请求用掉一个，用完了就正常回答

    def fault(self, kind, **details):
        """排一个故障，给下一个请求：429（retry_after=秒）、500、401、redirect、slow（seconds=秒）、silent、
        garbage（不是 JSON）、gbk（GBK 编码、声明 charset=gbk）、empty（没有结果）、shape（不认识的格式）、
        hostile（第一条结果的标题里夹着清屏的 ESC 序列和反转方向的字符）、huge（10 MiB 的响应体）、
        endless（分块传输，一块接一块，永远不结束）。"""
        self.faults.append((kind, details))

    def handler(self):
        return make_handler(self)


def make_handler(stand_in):
    class Handler(QuietHandler):
        def do_GET(self):
            self.answer(None)

        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                body = json.loads(raw.decode("utf-8"))
            except ValueError:
                body = raw
            self.answer(body)

        def answer(self, body):
            parts = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(parts.query))
            stand_in.requests.append({"method": self.command, "path": parts.path, "query": query,
                                      "headers": dict(self.headers), "body": body})
            kind, details = stand_in.faults.pop(0) if stand_in.faults else ("ok", {})
            if kind == "silent":
                stand_in.stop.wait(GIVE_UP_AFTER)
                return
            if kind in ("huge", "endless"):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header(*(("Content-Length", str(10 << 20)) if kind == "huge" else ("Transfer-Encoding", "chunked")))
                self.end_headers()
                try:
                    for _ in range(10 << 10):   # 10 MiB；endless 在 10 MiB 以后也该早被客户端挂断了
                        self.wfile.write(b" " * 1024 if kind == "huge" else b"400\r\n" + b" " * 1024 + b"\r\n")
                except OSError:
                    pass
                return
            if kind == "slow":
                stand_in.stop.wait(details.get("seconds", 1))
            question = (body or {}).get("query", "") if isinstance(body, dict) else query.get("q", "")
            count = int((body or {}).get("count") or (body or {}).get("max_results") or 0) if isinstance(body, dict) \
                else int(query.get("count") or query.get("num") or 0)
            pages = [] if kind == "empty" else matching(question, count or 10)
            if kind == "hostile" and pages:
                pages = [dict(pages[0], title=pages[0]["title"] + "\x1b[2J\u202e")] + pages[1:]
            payload = shaped(stand_in.provider, pages)
            status, headers = 200, {}
            if kind == "429":
                status, payload = 429, {"error": "rate limited"}
                headers = {"Retry-After": str(details.get("retry_after", 1))} if "retry_after" in details else {}
            elif kind in ("500", "401", "403", "400"):
                status, payload = int(kind), {"error": f"stand-in {kind}"}
            elif kind == "redirect":
                status, payload, headers = 302, {}, {"Location": "http://203.0.113.9/steal"}
            elif kind == "shape":
                payload = {"hits": [{"headline": "?", "href": "?"}]}
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            content_type = "application/json"
            if kind == "garbage":
                data, content_type = b"<html>busy</html>", "text/html"
            elif kind == "gbk":
                data, content_type = json.dumps(payload, ensure_ascii=False).encode("gbk"), "application/json; charset=gbk"
            self.send_response(status)
            for name, value in {"Content-Type": content_type, "Content-Length": str(len(data)), **headers}.items():
                self.send_header(name, value)
            self.end_headers()
            try:
                self.wfile.write(data)
            except OSError:
                pass

    return Handler


USAGE = "用法：python3 checks/stand_in_search.py [--provider bocha|brave|google|tavily] [--port 端口]"
DEFAULT_PORT = 8765   # 第 07 课写的就是这个端口；被占用时用 --port 换一个


def main(argv):
    options = parse_tool_options(argv, USAGE, __doc__, values=("--provider", "--port"))
    provider = options["--provider"] or "bocha"
    if provider not in PROVIDERS:
        print(f"错误：--provider 只能是 {'、'.join(PROVIDERS)} 之一，现在是 {provider}。", file=sys.stderr)
        return 2
    port = options["--port"] or str(DEFAULT_PORT)
    if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        print(f"错误：--port 应当是 1–65535 之间的整数，现在是 {port}。", file=sys.stderr)
        return 2
    try:
        server = StandInSearch(provider, int(port)).__enter__()
    except OSError:
        print(f"错误：端口 {port} 已经有程序在用（是不是已经开着一个？），用 --port 换一个。", file=sys.stderr)
        return 2
    print(f"假搜索接口（{provider} 的格式）在 {server.url}，按 Ctrl-C 停下。在另一个终端里设置：", flush=True)
    print(f"  export SEARCH_PROVIDER={provider} SEARCH_API_URL={server.url}", flush=True)
    print(f"  （Windows 的 cmd：set SEARCH_PROVIDER={provider}& set SEARCH_API_URL={server.url}）", flush=True)
    print(f'  （PowerShell：$env:SEARCH_PROVIDER="{provider}"; $env:SEARCH_API_URL="{server.url}"）', flush=True)
    try:
        while True:
            time.sleep(1)
    finally:
        server.__exit__(None, None, None)


if __name__ == "__main__":
    sys.exit(run_tool(main))
