"""检查共用的小工具：找到套件根目录、在临时副本里运行命令、准备干净的环境变量。

不是检查本身；被 checks/test_*.py 导入。
"""
import atexit
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "retrieval_qa.py"
DOCUMENTS = ROOT / "retrieval_documents.json"
if str(ROOT) not in sys.path:   # 检查要导入套件根目录下的脚本
    sys.path.insert(0, str(ROOT))
KIT_FILES = ["reply_assistant.py", "model_reply_assistant.py", "retrieval_qa.py", "retrieval_documents.json"]   # 学生下载到同一个文件夹里的文件

# 子进程也用同一个 Python、同样的 -W 设置（例如 -W error）。课文执行器用 PYTHON，和学生敲的命令完全一样；
# 其余检查用 KIT_PYTHON，多加一个 -S（不加载 site）：套件只用标准库，site 只会拖慢每个子进程的启动
PYTHON = [sys.executable] + [f"-W{option}" for option in sys.warnoptions]
KIT_PYTHON = PYTHON + ["-S"]

# 会改变程序行为的环境变量：检查里一律去掉，让结果不依赖谁的机器
SCRUBBED = ("PYTHONIOENCODING", "PYTHONUTF8", "PYTHONWARNINGS", "PYTHONSTARTUP", "PYTHONINSPECT",
            "DEEPSEEK_API_KEY", "DEEPSEEK_MODEL", "LOCAL_MODEL_URL", "LOCAL_MODEL_NAME", "LOCAL_MODEL_API_KEY")
# 程序行为的检查用自己的资料，学生怎么改 retrieval_documents.json 都不影响它们
FIXTURE_DOCUMENTS = Path(__file__).resolve().parent / "fixture_documents.json"

# 发布版 retrieval_documents.json 的摘要（解析后规范化再算，所以换行符和缩进不影响）。
# 维护者改了样例资料，要同时更新这里，并重新核对课文。
SHIPPED_DOCUMENTS_SHA256 = "aafe639d03a2d75031ca63de17f5977279d3acc860cd06e9b9fe2c7b7a977813"
IN_CI = os.environ.get("CI") == "true"


def documents_digest(path=DOCUMENTS):
    try:
        records = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    return hashlib.sha256(json.dumps(records, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


# 学生做过练习，资料就和发布版不同了：依赖样例资料的检查跳过（并说明原因），其余照常检查。
# 持续集成（CI=true）里不跳过：仓库里的资料必须就是发布版。
DOCUMENTS_EDITED = documents_digest() != SHIPPED_DOCUMENTS_SHA256
EDITED_REASON = "retrieval_documents.json 和发布版不同（做过练习？）：依赖样例资料的检查跳过，恢复原文件后可完整检查"
needs_shipped_documents = unittest.skipIf(DOCUMENTS_EDITED and not IN_CI, EDITED_REASON)


def sample_routing_holds():
    """程序行为的检查（模型调用、拒绝规则、命令行约定……）只依赖样例问题的这几条命中。学生做了练习一
    （只加了关键词）时它们仍然成立，这些检查就照常运行，老师检查学生的副本时不至于大半被跳过。"""
    import contextlib
    import io
    import retrieval_qa
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            documents = retrieval_qa.load_documents(str(DOCUMENTS))
    except retrieval_qa.KitError:
        return False

    def route(question):
        return [(hit["id"], hit["title"], hit["matched"]) for hit in retrieval_qa.retrieve(question, documents)]

    trial = [record for record in documents if record["id"] == "D01#1"]
    return (len(documents) == 5 and not retrieval_qa.document_warnings(documents)
            and route("试用几天？") == [("D01#1", "产品规则 · 试用", ["几天", "试用"])] and "7 天" in trial[0]["text"]
            and route("部署后会自动发送吗？") == [("D01#2", "产品规则 · 发送边界", ["发送", "自动"]),
                                             ("D02#1", "部署说明 · 服务器资源", ["部署"])]
            and route("价格是多少？") == [] and "D04#1" in [record["id"] for record in documents])


ROUTING_REASON = "样例问题的命中和发布版不同（资料被改过）：依赖这些命中的检查跳过，恢复原文件后可完整检查"
needs_sample_routing = unittest.skipIf(DOCUMENTS_EDITED and not IN_CI and not sample_routing_holds(), ROUTING_REASON)



_pycache = []


def pycache_dir():
    """子进程共用的字节码缓存目录：不在套件文件夹里留下 __pycache__，又不必每个子进程都重新编译。退出时删除。"""
    if not _pycache:
        _pycache.append(tempfile.mkdtemp(prefix="kit-pycache-"))
        atexit.register(shutil.rmtree, _pycache[0], True)
    return _pycache[0]


def clean_env(**extra):
    env = {key: value for key, value in os.environ.items() if key not in SCRUBBED}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = pycache_dir()
    env.update(extra)
    return env


def run_kit(args, stdin="", cwd=None, script=SCRIPT, env=None, python=None):
    """运行 retrieval_qa.py，返回 (退出码, stdout 文本, stderr 文本)，都按 UTF-8 解码。"""
    done = subprocess.run((python or KIT_PYTHON) + [str(script)] + list(args),
                          input=stdin.encode("utf-8"), capture_output=True, cwd=cwd,
                          env=env if env is not None else clean_env(), timeout=60)
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


def interrupt_kit(args, ready, env=None, stdin=subprocess.PIPE):
    """启动 retrieval_qa.py，等 ready(process) 返回后发 SIGINT（相当于按 Ctrl-C），返回 (退出码, stdout, stderr) 字节。"""
    process = subprocess.Popen(KIT_PYTHON + [str(SCRIPT)] + list(args), stdin=stdin, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env if env is not None else clean_env())
    try:
        ready(process)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    return process.returncode, out, err


def run_main(module, args, **env):
    """在进程内运行某个脚本的 main()，环境变量只有 clean_env() 加上 env。返回 (退出码, stdout, stderr)。"""
    import contextlib
    import io
    from unittest import mock
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.dict(os.environ, clean_env(**env), clear=True), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = module.main(args)
    return code, out.getvalue(), err.getvalue()


def run_json(args, **kwargs):
    """运行并把 stdout 解析成 JSON；stdout 必须恰好是一个 JSON 对象。"""
    code, out, err = run_kit(args, **kwargs)
    return code, json.loads(out), err


class KitCopy:
    """临时目录里的一份套件副本：练习在这里做，不碰仓库里的文件。"""

    def __init__(self, with_checks=False):
        self._tmp = tempfile.TemporaryDirectory()
        self.path = Path(self._tmp.name) / "kit"
        self.path.mkdir()
        for name in KIT_FILES:
            shutil.copy2(ROOT / name, self.path / name)
        if with_checks:   # 评测、练习自查这些工具在 checks/ 里，用到它们时连 checks/ 一起复制
            shutil.copytree(ROOT / "checks", self.path / "checks", ignore=shutil.ignore_patterns("__pycache__"))
        self.documents = self.path / "retrieval_documents.json"
        self.original = self.documents.read_bytes()

    def records(self):
        return json.loads(self.documents.read_text(encoding="utf-8"))

    def write_records(self, records):
        self.documents.write_text(json.dumps(records, ensure_ascii=False, indent=2), encoding="utf-8")

    def restore(self):
        self.documents.write_bytes(self.original)

    def run(self, args, **kwargs):
        return run_kit(args, script=self.path / "retrieval_qa.py", **kwargs)

    def tool(self, name, args=(), **kwargs):
        """运行副本里的 checks/ 工具，例如 tool("exercise.py", ["1"])。"""
        return run_kit(list(args), script=self.path / "checks" / name, **kwargs)

    def close(self):
        self._tmp.cleanup()


def write_temp(directory, name, content):
    """在临时目录里写一个文件；content 是 str 时按 UTF-8 写，是 bytes 时原样写。"""
    path = Path(directory) / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="\n")
    return path


def load_sample_texts():
    """随套件发布的资料：id → 正文。"""
    return {record["id"]: record["text"] for record in json.loads(DOCUMENTS.read_text(encoding="utf-8-sig"))}
