"""检查共用的小工具：找到套件根目录、在临时副本里运行命令、准备干净的环境变量。

不是检查本身；被 checks/test_*.py 导入。
"""
import sys

if sys.version_info < (3, 10):   # checks/ 里的工具都先导入这里：新语法和新函数出现之前先说清楚
    sys.stderr.write(f"错误：这套教材需要 Python 3.10 或更新版本，现在是 {sys.version.split()[0]}。\n")
    sys.exit(2)

import atexit   # noqa: E402  （版本检查要在最前面）
import contextlib   # noqa: E402
import functools   # noqa: E402
import hashlib   # noqa: E402
import importlib.util   # noqa: E402
import io   # noqa: E402
import json   # noqa: E402
import os   # noqa: E402
import shutil   # noqa: E402
import signal   # noqa: E402
import stat   # noqa: E402
import subprocess   # noqa: E402
import tempfile   # noqa: E402
import time   # noqa: E402
from pathlib import Path   # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CHECKS_DIR = ROOT / "checks"
SCRIPT = ROOT / "retrieval_qa.py"
# 检查的资料分两种：
# - 学生的资料文件（默认是套件里的 retrieval_documents.json；run_checks.py --documents 可以换成别的文件，
#   经环境变量 KIT_CHECK_DOCUMENTS 告诉各项检查，见 student_documents）。只有“关于资料文件本身”的检查读它：
#   能不能读、样例问题命中什么、课文记录。
# - 发布版资料的副本 checks/shipped_documents.json：程序行为的检查都在它上面跑，学生怎么改资料都不会跳过它们。
SHIPPED_DOCUMENTS = CHECKS_DIR / "shipped_documents.json"
if str(ROOT) not in sys.path:   # 检查要导入套件根目录下的脚本
    sys.path.insert(0, str(ROOT))
KIT_FILES = ["reply_assistant.py", "model_reply_assistant.py", "retrieval_qa.py", "retrieval_documents.json"]   # 学生下载到同一个文件夹里的文件
# 发布的套件里的全部文件（和 git ls-files 相同，test_layout 核对）。套件不是 git 仓库（下载的压缩包）时，grade.py 和建班靠它
# 分清哪些是套件的、哪些是做练习时加的（记录.csv、trick.json……）：不能拿文件夹里现有的文件去猜
SHIPPED_FILES = KIT_FILES + [".ci/run", ".gitattributes", ".gitignore", "LICENSE", "README.md"] \
    + [f"lessons/{name}" for name in ("01-reply-assistant.md", "02-model-call.md", "03-retrieval-qa.md",
                                      "04-sources-and-failure-boundaries.md", "05-untrusted-materials.md", "06-evaluation.md",
                                      "07-web-search.md", "glossary.md")] \
    + [f"checks/{name}" for name in (
        "README.md", "acceptance.py", "bench.py", "evaluate.py", "exercise.py", "grade.py", "grounding_eval.py", "in_process.py", "kit_helpers.py",
        "run_checks.py", "stand_in_model.py", "stand_in_search.py", "transcripts.py", "web_eval.py",
        "test_cli.py", "test_evidence.py", "test_exercises.py", "test_grounding.py", "test_in_process.py", "test_layout.py",
        "test_lesson_text.py", "test_lessons.py", "test_loader.py", "test_markdown.py", "test_model.py", "test_retrieval.py",
        "test_grade.py", "test_safety.py", "test_servers.py", "test_tools.py", "test_untrusted.py", "test_web.py",
        "answer_spans.json", "dedupe_pairs.json", "eval_questions.json", "fixture_documents.json", "grounding_cases.json",
        "grounding_documents.json", "grounding_holdout.json", "measured.json", "shipped_documents.json", "web_answers.json", "web_pages.json",
        "web_questions.json")]

# 子进程也用同一个 Python、同样的 -W 设置（例如 -W error），再加一个 -S（不加载 site）：套件只用标准库，
# site 只会拖慢每个子进程的启动（有的机器上 site 会顺带导入一堆第三方包，每次多花几十毫秒）。课文执行器也这样跑
PYTHON = [sys.executable] + [f"-W{option}" for option in sys.warnoptions]
KIT_PYTHON = PYTHON + ["-S"]

# 会改变程序行为的环境变量：检查里一律去掉，让结果不依赖谁的机器
SCRUBBED = ("PYTHONIOENCODING", "PYTHONUTF8", "PYTHONWARNINGS", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONUNBUFFERED", "PYTHONSAFEPATH",
            "DEEPSEEK_API_KEY", "DEEPSEEK_MODEL", "LOCAL_MODEL_URL", "LOCAL_MODEL_NAME", "LOCAL_MODEL_API_KEY")
# 另一份与样例无关的资料（图书馆的借阅规则）：检查模型那一侧的行为时用，免得检查只在样例资料上成立
FIXTURE_DOCUMENTS = CHECKS_DIR / "fixture_documents.json"


def student_documents():
    """学生的资料文件：用到时才看环境变量（run_checks.py --documents 在同一个进程里设它，再跑检查）。"""
    return Path(os.environ.get("KIT_CHECK_DOCUMENTS") or ROOT / "retrieval_documents.json")


def in_ci():
    """在 CI 里（CI=true）：仓库自己的资料文件必须是发布版，不跳过；老师用 --documents 检查学生的文件时不算。"""
    return os.environ.get("CI") == "true" and not os.environ.get("KIT_CHECK_DOCUMENTS")


def read_records(path):
    """读一个资料文件，返回 (记录列表, None) 或 (None, 读不了的原因)。不抛异常：资料坏了也不能让检查崩掉。"""
    from model_reply_assistant import describe_os_error, read_head   # 只读普通文件：资料文件是命名管道也不会卡住
    try:
        return json.loads(read_head(path, 10 * 1024 * 1024).decode("utf-8-sig")), None
    except OSError as error:   # 用中文说原因（不用系统的英文原话，例如 No such file or directory）
        return None, f"读不了：{describe_os_error(error)}"
    except UnicodeDecodeError:
        return None, "不是 UTF-8 编码"
    except (ValueError, RecursionError):
        return None, "不是合法的 JSON"


# 像是哪个练习：第 03 课的练习一、二、三，第 05 课的练习五（第 04 课的练习四不改资料）
MAX_NAMED = 5   # 开头那句说明最多点名几条加了的记录


def documents_state(path=None):
    """学生的资料文件（或 path）和发布版比，返回 None（相同：换行符、BOM、缩进和字段顺序都不算）或一句中文说明。
    例："D01#1 的关键词多了「免费用多久」，像是练习一"。"""
    records, problem = read_records(student_documents() if path is None else path)
    shipped, _ = read_records(SHIPPED_DOCUMENTS)
    if problem:
        return f"{problem}；原因见下面那一项失败的说明"
    if records == shipped:
        return None
    if not (isinstance(records, list) and all(isinstance(r, dict) and isinstance(r.get("id"), str) for r in records)):
        return "结构和发布版不同"
    from retrieval_qa import instruction_like
    old, new = {r["id"]: r for r in shipped}, {r["id"]: r for r in records}
    counted = [r["id"] for r in records]
    changes = [f"{i} 出现了 {counted.count(i)} 次（id 重复）" for i in dict.fromkeys(counted) if counted.count(i) > 1]
    changes += [f"删掉了 {i}" + ("，像是练习三" if i == "D01#1" else "") for i in old if i not in new]
    added = [i for i in new if i not in old]
    for record_id in added[:MAX_NAMED]:
        looks = instruction_like(str(new[record_id].get("title", "")) + " " + str(new[record_id].get("text", "")))
        changes.append(f"加了 {record_id}" + ("，像是练习五" if looks else ""))
    if len(added) > MAX_NAMED:
        changes.append(f"一共加了 {len(added)} 条记录，其余没有一一列出")
    for record_id in (i for i in new if i in old and new[i] != old[i]):
        before, after = old[record_id], new[record_id]
        wrong = [field for field in ("title", "text", "keywords") if type(after.get(field)) is not type(before[field])]
        if wrong:
            changes += [f"{record_id} 的 {field} 应当是{'数组' if field == 'keywords' else '字符串'}" for field in wrong]
            continue
        gained = [k for k in after["keywords"] if k not in before["keywords"]]
        lost = [k for k in before["keywords"] if k not in after["keywords"]]
        for words, how in ((gained, "多了"), (lost, "少了")):   # 多了和少了都说：只说一边，老师会看错学生改了什么
            if words:
                shown = "、".join(f"「{word}」" for word in words[:MAX_NAMED]) + ("……" if len(words) > MAX_NAMED else "")
                changes.append(f"{record_id} 的关键词{how}{shown}" + ("，像是练习一" if record_id == "D01#1" and how == "多了" else ""))
        if not gained and not lost and after["keywords"] != before["keywords"]:
            changes.append(f"{record_id} 的关键词顺序或次数变了")
        for field, label in (("title", "标题"), ("text", "正文")):
            if after[field] != before[field]:
                changes.append(f"{record_id} 的{label}改了" + ("，像是练习二" if record_id == "D01#1" and field == "text" else ""))
        for field in sorted(set(before) | set(after), key=str):   # 别的字段：说出是哪一个
            if field not in ("id", "title", "text", "keywords") and before.get(field, None) != after.get(field, None):
                how = "多了" if field not in before else "少了" if field not in after else "改了"
                changes.append(f"{record_id} {how}字段 {field}" if how != "改了" else f"{record_id} 的字段 {field} 改了")
    if [i for i in dict.fromkeys(counted) if i in old] != [i for i in old if i in new]:
        changes.append("记录的顺序变了")
    return "；".join(changes) or "内容和发布版不同"


# 只有关于资料文件本身的检查（样例问题的命中、课文记录）依赖它和发布版相同；不同时跳过并说明原因。
# 持续集成（CI=true）里不跳过：仓库里的资料必须就是发布版。
def needs_shipped_documents(test):
    """装饰器：学生的资料和发布版不同时跳过这项检查，并说明原因。（unittest 用到时才导入：checks/ 里的工具不需要它）"""
    import unittest
    state = documents_state()
    reason = (f"{student_documents().name} 和发布版不同：{state}：这项检查比对的是发布版资料的内容，"
              "资料改过就跳过（做练习时这是正常的）")
    return unittest.skipIf(state is not None and not in_ci(), reason)(test)


_run_dir = []
# 内存里的文件系统（Linux）：这次运行的临时目录可以建在这里，见 scratch_parent
RAM_SCRATCH = "/dev/shm"
# 字节：整套检查一次运行在临时目录里最多占这么多（量出来的峰值略低于它）
RUN_PEAK = 90 * 1024 * 1024
# 字节：/dev/shm 至少有这么多空地方才用它（一次运行最多占 RUN_PEAK，留足余地）；Docker 里的
# /dev/shm 默认只有 64 MB，不够，照常用系统临时目录
RAM_SCRATCH_MIN_FREE = 512 * 1024 * 1024
RUN_PREFIX = "kit-checks-run-"   # 这次运行的临时目录的名字开头
# 秒：/dev/shm 里自己以前的运行留下的临时目录，这么久没动过就删掉（见 clear_stale_runs）。一次运行再慢也跑不了这么久
STALE_AFTER = 3600


def scratch_parent():
    """这次运行的临时目录建在哪个文件夹里；None 是系统默认的临时目录。
    检查要建、删几千个小文件。Linux 上用户没指定临时目录（TMPDIR、TEMP、TMP 都没设），内存里的 /dev/shm 又能写、
    空地方也够时，建在那里：/tmp 在磁盘上时，整套检查这样快一些。检查的内容一样，只是文件写在内存里；跑完照样整个删掉。"""
    if not sys.platform.startswith("linux") or any(os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")):
        return None
    try:
        roomy = shutil.disk_usage(RAM_SCRATCH).free >= RAM_SCRATCH_MIN_FREE
    except OSError:   # 没有 /dev/shm
        return None
    return RAM_SCRATCH if roomy and os.path.isdir(RAM_SCRATCH) and os.access(RAM_SCRATCH, os.W_OK | os.X_OK) else None


def clear_stale_runs(parent):
    """parent（内存里的 /dev/shm）里自己以前的运行留下的临时目录：跑到一半被杀掉（关了终端）时没删成，内存里的
    文件要到重启才会消失。STALE_AFTER 秒没动过的删掉；别人的、别的文件不碰。"""
    now = time.time()
    for path in Path(parent).glob(RUN_PREFIX + "*"):
        with contextlib.suppress(OSError):   # 别的运行刚删过，或删不了：不要紧
            info = path.lstat()
            if info.st_uid == os.getuid() and now - info.st_mtime > STALE_AFTER:   # rmtree 不删文件和链接
                shutil.rmtree(path)


def room_warning(folder):
    """folder（这次运行的临时目录）剩的空间不够整套检查用（RUN_PEAK）时，一句中文提醒；够用或量不了时是 None。
    空间不够时几百项检查各自报 “No space left on device”，看不出是同一个原因。"""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return None
    if free >= RUN_PEAK:
        return None
    return (f"注意：临时目录 {folder} 所在的盘只剩 {free / 2**20:.0f} MB，整套检查要用 {RUN_PEAK // 2**20} MB 左右："
            "空间不够的检查会失败（No space left on device）。清出一些空间，或把 TMPDIR 设到空间够的文件夹再运行。")


def run_dir():
    """这一次跑检查共用的临时目录；有它就说明是在跑检查。建在哪里见 scratch_parent。run_checks.py 建好一个，
    经 KIT_CHECK_RUN_DIR 交给各组检查；没有时自己建一个，也放进环境变量（本进程里运行的脚本和子进程都用它），
    谁建的谁在退出时删除。建的时候还把 TMPDIR 换成这个目录里的 tmp/：这次运行里写的临时文件跑完一起删。"""
    if not _run_dir:
        shared = os.environ.get("KIT_CHECK_RUN_DIR", "")
        if shared and os.path.isdir(shared):
            _run_dir.append(shared)
        else:
            parent = scratch_parent()
            if parent:
                clear_stale_runs(parent)
            try:
                _run_dir.append(tempfile.mkdtemp(prefix=RUN_PREFIX, dir=parent))
            except OSError:   # /dev/shm 看着能写、其实建不了（加固过的系统）：用系统临时目录
                _run_dir.append(tempfile.mkdtemp(prefix=RUN_PREFIX))
            atexit.register(shutil.rmtree, _run_dir[0], True)
            os.environ["KIT_CHECK_RUN_DIR"] = _run_dir[0]
            # 检查和套件在这次运行里写的临时文件（第 07 课的搜索缓存、各组的临时副本）都放进这个目录，跑完一起删掉
            os.makedirs(os.path.join(_run_dir[0], "tmp"))
            os.environ["TMPDIR"] = os.path.join(_run_dir[0], "tmp")
    return _run_dir[0]


# 量出来的结果提交在这个文件里（Measured）；决定结果的代码：改了其中一个字节，记下的就作废
MEASURED = CHECKS_DIR / "measured.json"
MEASURING_CODE = [ROOT / name for name in KIT_FILES[:3]] + [CHECKS_DIR / name for name in (
    "grounding_eval.py", "web_eval.py", "stand_in_search.py", "web_pages.json")]


def as_committed(data):
    """文件内容去掉开头的 BOM、把 CRLF 换成 LF，就是仓库里存的样子：Windows 上存过、克隆过的副本不会因此被算作“改过”。"""
    return b"".join(committed_chunks(io.BytesIO(data)))


def committed_chunks(handle, size=2 ** 20):
    """从打开的二进制文件 handle 一块块读出 as_committed 的样子：从不把整个文件读进来（grade.py 读学生的大文件），
    块尾的 \\r 留到下一块，CRLF 被切在两块之间也认得。"""
    carry, first = b"", True
    while True:
        chunk = handle.read(size)
        data = carry + chunk
        if first and len(data) < 3 and chunk:   # BOM 有 3 个字节：攒够了再看开头
            carry = data
            continue
        if first:
            data, first = data.removeprefix(b"\xef\xbb\xbf"), False
        if not chunk:
            yield data
            return
        carry = b"\r" if data.endswith(b"\r") else b""
        yield data[:len(data) - len(carry)].replace(b"\r\n", b"\n")


def code_fingerprint():
    """MEASURING_CODE 的 SHA-256（前 16 个十六进制字符），按 as_committed 的样子算：Windows 上编辑过的副本和仓库里的是同一份代码。"""
    digest = hashlib.sha256()
    for path in MEASURING_CODE:
        digest.update(as_committed(path.read_bytes()) + b"\0")
    return digest.hexdigest()[:16]


def read_measured():
    """checks/measured.json 的内容：{"fingerprint": 指纹, 种类: {键: 结果}, …}；没有、读不了、不是这个样子时是 None。"""
    try:
        saved = json.loads(MEASURED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    fine = isinstance(saved, dict) and isinstance(saved.get("fingerprint"), str) and \
        all(isinstance(known, dict) for kind, known in saved.items() if kind != "fingerprint")
    return saved if fine else None


@functools.lru_cache(maxsize=None)
def committed_results():
    """checks/measured.json 里记下的 {种类: {键: 结果}}；它量的不是现在这份代码（指纹不同）、读不了时是空的。只读：新量的不往里放。"""
    saved = read_measured()
    if saved is None or saved["fingerprint"] != code_fingerprint():
        return {}
    return {kind: known for kind, known in saved.items() if kind != "fingerprint"}


class Measured:
    """量具的结果（标注集上出处核对的判定、第 07 课的几样），维护者量好、提交在 checks/measured.json 里：
    改了套件或量具的代码（MEASURING_CODE）以后运行 python3 checks/grounding_eval.py --save，把它一起提交。
    文件里记着代码的指纹：和现在的代码相同，就直接用记下的结果；不同（改了代码还没重新量）就每项都真的量，结果照样对，
    只是慢，而 test_grounding 的 MeasuredFileTest 会失败、说出该运行的命令。检查还抽一部分真的量、和记下的比，
    CI 在每个 Python 上用 --verify 全部重量一遍：记下的结果和真的量出来的不同，就失败。
    指纹只看文件：检查用 mock 换掉了套件的函数再量，要先把 saving 设成 {}，不然拿到的是记下的、原来代码的结果。
    saving 不是 None 时（--save、--verify、抽查）不用记下的，每项都真的量，量到的按种类、键记进 saving。"""
    saving = None

    def __init__(self, kind):
        self.kind = kind
        self.known = {} if self.saving is not None else committed_results().get(kind, {})

    def results(self, items, content_of, measure):
        """items 每一项的结果：content_of(项) 是决定结果的全部输入（JSON 能表示的值），记下的没有就 measure(项) 真的量一次
        （不记下：这一次量的可能是换掉了函数的代码）。结果要是 JSON 能原样表示的值（列表而不是元组），记下的和新量的才比得了。"""
        results = []
        for item in items:
            key = self.key(content_of(item))
            result = self.known[key] if key in self.known else measure(item)
            if self.saving is not None:
                self.saving.setdefault(self.kind, {})[key] = result
            results.append(result)
        return results

    @staticmethod
    def key(content):
        """一项在文件里的键：决定结果的全部输入（JSON 能表示的值）的 SHA-256，前 16 个十六进制字符。"""
        return hashlib.sha256(json.dumps(content, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def has_terminal():
    """这个进程有没有控制终端（类 Unix 系统上打得开 /dev/tty）；Windows 上当作没有。
    检查开子进程时，只在有终端时让子进程自成一个会话（start_new_session）：那样它碰不到终端，不会去问开发者要密钥，
    终端里按 Ctrl-C 也不会送到它。没有终端时（跑整套检查的子进程就没有，见 run_checks.worker_group）子进程留在
    同一个进程组里：按了 Ctrl-C，主进程停掉那一组，检查开的进程一个不剩。"""
    if sys.platform == "win32":
        return False
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
    except OSError:
        return False
    return True


def clean_env(**extra):
    """子进程的环境变量：去掉 SCRUBBED；字节码照常写在源代码旁边的 __pycache__ 里（学生的机器上就是这样；已被
    .gitignore 忽略），第二个子进程起就不必再编译导入的模块，标准库也用 Python 装好的字节码。
    这次运行共用的临时目录（KIT_CHECK_RUN_DIR，见 run_dir）也在里面。"""
    run_dir()
    # LOCAL_MODEL_ 开头的（拼错的、小写的也算）都去掉：套件见了就不走官方地址。SEARCH_ 开头的也去掉：照第 07 课设过
    # SEARCH_API_KEY 的人跑检查时，哪一项漏写了 SEARCH_API_URL，都不能因此去请求真的搜索接口
    env = {key: value for key, value in os.environ.items()
           if key not in SCRUBBED and not key.upper().startswith(("LOCAL_MODEL_", "SEARCH_"))
           and key not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env.update(extra)
    return env


ON_SHIPPED = ["--documents", str(SHIPPED_DOCUMENTS)]


# KIT_CHECK_PROCESSES=1：每次都开真的子进程（进程内运行省下的只是启动，不能少查什么：CI 在 3.13 上这样跑一遍）
ALL_IN_PROCESSES = os.environ.get("KIT_CHECK_PROCESSES") == "1"


def run_kit(args, stdin="", cwd=None, script=SCRIPT, env=None, python=None, documents=SHIPPED_DOCUMENTS, process=False):
    """运行 retrieval_qa.py（或 script），返回 (退出码, stdout 文本, stderr 文本)，都按 UTF-8 解码。
    检查的是程序的行为，所以默认读发布版资料的副本（args 里自己写了 --documents 的除外）；
    documents=None 时不加 --documents，程序读脚本旁边的默认资料文件。
    默认在本进程里运行（checks/in_process.py：看到的和新进程一样，只是省了启动）；process=True 或指定了别的
    python 时开一个真的子进程：只有进程才看得到的行为（关掉的流、信号、版本守卫、导入了哪些模块）要这样查。"""
    if documents is not None and script == SCRIPT and not any(a.startswith("--documents") for a in args):
        args = list(args) + ["--documents", str(documents)]
    env = env if env is not None else clean_env()
    if process or python or ALL_IN_PROCESSES:
        done = subprocess.run((python or KIT_PYTHON) + [str(script)] + list(args), input=stdin.encode("utf-8"), capture_output=True,
                              cwd=cwd, env=env, timeout=60, start_new_session=has_terminal())   # 没有终端：不会去问开发者要密钥
        code, out, err = done.returncode, done.stdout, done.stderr
    else:
        from in_process import run_script
        code, out, err = run_script(script, args, stdin.encode("utf-8"), cwd=cwd, env=env)
    return code, out.decode("utf-8"), err.decode("utf-8")


def assert_same_in_a_process(test, calls):
    """calls 是 [(args, run_kit 的其他参数)]：每个在本进程里和在真的子进程里各跑一次，退出码、stdout、stderr 必须一字不差。
    每组检查都用它抽几条自己的命令：进程内运行省下的只是启动 Python，看到的东西不能变。"""
    for args, kwargs in calls:
        with test.subTest(args=args):
            inside = run_kit(args, **kwargs)
            test.assertEqual(inside, run_kit(args, process=True, **kwargs))
            test.assertNotIn("Traceback", inside[2])


def interrupt_kit(args, ready, env=None, stdin=subprocess.PIPE):
    """启动 retrieval_qa.py，等 ready(process) 返回后发 SIGINT（相当于按 Ctrl-C），返回 (退出码, stdout, stderr) 字节。"""
    # 老师在脚本里把检查放到后台跑（命令后面加 &）时，shell 让检查忽略 SIGINT，开的子进程也跟着忽略，Ctrl-C 就试不出来。
    # 启动子进程的那一刻换成 Python 平常的处理：子进程和在终端里运行时一样，收到 SIGINT 会中断
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process = subprocess.Popen(KIT_PYTHON + [str(SCRIPT)] + list(args) + ON_SHIPPED, stdin=stdin, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=env if env is not None else clean_env())
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        ready(process)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    return process.returncode, out, err


def run_main(module, args, **env):
    """在进程内运行某个脚本的 main()，环境变量只有 clean_env() 加上 env。返回 (退出码, stdout, stderr)。
    和 run_kit 一样，retrieval_qa 默认读发布版资料的副本。和 run_kit 不同，它用的是检查自己导入的那个模块：
    检查可以先 mock 模块里的函数再运行；要看“像一个新进程那样”的结果，用 run_kit。"""
    import io
    from unittest import mock
    import retrieval_qa
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.dict(os.environ, clean_env(**env), clear=True), \
            mock.patch.object(retrieval_qa, "DOCUMENTS_PATH", str(SHIPPED_DOCUMENTS)), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = module.main(args)
    return code, out.getvalue(), err.getvalue()


def run_json(args, **kwargs):
    """运行并把 stdout 解析成 JSON；stdout 必须恰好是一个 JSON 对象。"""
    code, out, err = run_kit(args, **kwargs)
    return code, json.loads(out), err


def snapshot(kit):
    """副本此刻的样子：{相对路径: 内容}，文件夹的内容记作 None；只记普通文件和文件夹（链接不跟着走）。
    备份记在内存里，不用再复制一份套件。"""
    saved = {}
    for folder, dirs, names in os.walk(kit):
        for name in dirs + names:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            if os.path.isdir(path):
                saved[os.path.relpath(path, kit)] = None
            elif os.path.isfile(path):
                saved[os.path.relpath(path, kit)] = Path(path).read_bytes()
    return saved


def restore(kit, saved):
    """把副本改回 saved 记下的样子：多出来的文件、文件夹（__pycache__、练习的存档……）删掉，变了的、少了的写回。
    没变的文件不动：改回原样只要写几个文件，不必把整个套件重新复制一遍（这台机器上新建一个文件要 0.2 ms 左右，
    一次运行要复制几千个）。kit 本身被换成了链接或别的东西时不碰它（不然会删掉链接指向的地方），抛出 OSError。"""
    if os.path.islink(kit) or not os.path.isdir(kit):
        raise NotADirectoryError(f"{kit} 不再是副本的文件夹")
    for folder, dirs, names in os.walk(kit):
        for name in list(dirs):
            path = os.path.join(folder, name)
            if os.path.islink(path):   # 指向文件夹的链接：只删链接本身（Windows 上这种链接要用 rmdir 删）
                if sys.platform == "win32":
                    os.rmdir(path)
                else:
                    os.remove(path)
                dirs.remove(name)
            elif saved.get(os.path.relpath(path, kit), b"") is not None:   # 不是记下的文件夹
                shutil.rmtree(path)
                dirs.remove(name)
        for name in names:   # 多出来的、链接、命名管道、和别处共用的（硬链接：往里写会改到别处）都删掉
            path = os.path.join(folder, name)
            info = os.lstat(path)
            if saved.get(os.path.relpath(path, kit)) is None or not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
                os.remove(path)
    for relative, data in saved.items():   # 按 os.walk 的顺序：外层的文件夹在前
        path = Path(kit) / relative
        if data is None:
            path.mkdir(exist_ok=True)
        elif not path.is_file() or not path.stat().st_mode & stat.S_IWUSR or path.read_bytes() != data:   # 改了，或被设成只读
            path.unlink(missing_ok=True)
            path.write_bytes(data)


class KitCopy:
    """临时目录里的一份套件副本：练习在这里做，不碰仓库里的文件。
    用完（close）不删，留给同一个进程里下一个要副本的检查：那时用 restore 改回原样（和新复制的一样），
    不必每次都复制五十多个文件。进程结束时删掉。"""
    _spare = {}   # {(套件, 发布版资料, 带不带 checks/): (原样, [用完还回来的副本])}

    def __init__(self, with_checks=False):
        self._kind = (ROOT, SHIPPED_DOCUMENTS, with_checks)
        pristine, spare = KitCopy._spare.setdefault(self._kind, ({}, []))
        if not self._reuse(pristine, spare):
            self._tmp = tempfile.TemporaryDirectory()
            atexit.register(self._tmp.cleanup)
            self.path = Path(self._tmp.name) / "kit"
            self.path.mkdir()
            for name in KIT_FILES:   # 资料用发布版的副本：工具和练习的检查不受学生改动的影响
                shutil.copy2(shipped_source(name), self.path / name)
            if with_checks:   # 评测、练习自查这些工具在 checks/ 里，用到它们时连 checks/ 一起复制
                shutil.copytree(ROOT / "checks", self.path / "checks",
                                ignore=shutil.ignore_patterns("__pycache__", ".exercise-progress.json", ".exercise-done"))
                shutil.copytree(ROOT / "lessons", self.path / "lessons")   # 练习五要认出课文里的示范记录
            if not pristine:   # 这种副本的原样：第一份复制出来时记下
                pristine.update(snapshot(self.path))
        self.documents = self.path / "retrieval_documents.json"
        self.original = self.documents.read_bytes()

    def _reuse(self, pristine, spare):
        """拿一份还回来的副本，改回原样；改不回去的（上一项检查出错时留下了删不掉的东西）不用，进程结束时删。"""
        while spare:
            self._tmp, self.path = spare.pop()
            try:
                restore(self.path, pristine)
                return True
            except OSError:
                continue
        return False

    def records(self):
        return json.loads(self.documents.read_text(encoding="utf-8-sig"))

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
        spare = KitCopy._spare[self._kind][1]
        if (self._tmp, self.path) not in spare:   # 关两次也只还一次：不然两项检查会拿到同一份
            spare.append((self._tmp, self.path))


def shipped_source(name):
    """副本里的 name 从哪里复制：资料用发布版的副本（学生改坏了 retrieval_documents.json，行为检查也不受影响），其余用套件里的。"""
    return SHIPPED_DOCUMENTS if name == "retrieval_documents.json" else ROOT / name


def link_description(path):
    """path 是链接时说明它：符号链接说指向哪里（链接里写的原样，显示前由调用的地方转义），和别的文件共用内容的
    硬链接说还有几个；不是链接、不在时是 None。只有普通文件才看链接数：文件夹的链接数本来就大于 1（学生把资料
    文件弄成了文件夹时，不能说成“硬链接”）。grade.py、run_checks.py、exercise.py 说链接都用这一句。"""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        try:
            return f"链接 → {os.readlink(path)}"
        except OSError:   # 刚被换掉，读不出指向哪里：仍是链接
            return "链接"
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        return f"硬链接，和另外 {info.st_nlink - 1} 个文件共用内容"
    return None


def is_linked(path):
    """path 是链接：符号链接，或和别的文件共用内容的硬链接（见 link_description）。"""
    return link_description(path) is not None


@functools.lru_cache(maxsize=None)   # 只试一次
def can_symlink():
    """这台机器上能不能建符号链接：Windows 上没开“开发者模式”的普通用户不能（OSError）。"""
    with tempfile.TemporaryDirectory() as folder:
        try:
            os.symlink(folder, os.path.join(folder, "link"), target_is_directory=True)
        except (OSError, NotImplementedError):
            return False
    return True


def link_to_classmate(path, target):
    """建班用：把 path 做成指向 target（同学副本里的文件）的符号链接。这台机器上建不了符号链接时，先把 target 的内容复制到
    path 旁边的 path.classmate，再把 path 硬链接过去：内容是同学的，grade.py 一样要点名“有链接”、不给分；
    又不会让同学的那份也变成硬链接、被连带点名。"""
    if can_symlink():
        path.symlink_to(target)
    else:
        borrowed_copy = path.with_name(path.name + ".classmate")
        shutil.copyfile(target, borrowed_copy)
        os.link(borrowed_copy, path)


def needs_symlinks(check):
    """要建符号链接的检查：这台机器上建不了就跳过，说明原因，不算失败（学生的 Windows 多半是这样）。"""
    @functools.wraps(check)
    def checked(test, *args, **kwargs):
        if not can_symlink():
            test.skipTest("这台机器上建不了符号链接（Windows 没开开发者模式时就是这样）")
        return check(test, *args, **kwargs)
    return checked


def borrowed(path):
    """path 是别人的文件时说明为什么：它本身是链接（“是链接 → 同学的文件”），或它所在的文件夹是符号链接（整个副本指向
    同学的文件夹）；是自己的文件时返回 None。只看上一层文件夹：再往上的链接（macOS 的 /var → /private/var）是系统的，
    不是学生的。链接里写的路径是学生给的，显示前要转义（one_line）。"""
    link = link_description(path)
    if link:
        return f"是{link}"
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.islink(folder):
        return f"所在的文件夹是{link_description(folder)}"
    return None


def write_temp(directory, name, content):
    """在临时目录里写一个文件；content 是 str 时按 UTF-8 写，是 bytes 时原样写。"""
    path = Path(directory) / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="\n")
    return path


def load_sample_texts():
    """发布版资料：id → 正文。"""
    return {record["id"]: record["text"] for record in json.loads(SHIPPED_DOCUMENTS.read_text(encoding="utf-8-sig"))}


# ---------- checks/ 里各个工具共用的命令行外壳 ----------

class ToolUsageError(Exception):
    """工具的用法错误：run_tool 把它变成一行中文，退出码 2。"""


def parse_tool_options(argv, usage, help_text, flags=(), values=(), positionals=0):
    """工具共用的小解析器。flags 是开关，values 后面跟一个值（也可以写成 --name=值），positionals 是最多几个位置参数。
    -h / --help：打印 help_text（工具的模块说明），退出码 0。
    返回 {各选项名: …, "args": [位置参数]}；不认识的选项、缺值、多余的参数都抛出 ToolUsageError。"""
    from model_reply_assistant import closest, dash_problem, visible
    options = {"args": [], **{flag: False for flag in flags}, **{name: None for name in values}}
    names, pending, twice = ["--help", *flags, *values], list(argv), None
    while pending:
        arg = pending.pop(0)
        name, has_value, value = arg.partition("=")
        if arg in ("-h", "--help"):
            print(help_text.strip())
            raise SystemExit(0)
        elif arg in flags:
            options[arg] = True
        elif name in values:
            value = value if has_value else (pending.pop(0) if pending else "")
            if not value.strip():
                raise ToolUsageError(f"{name} 后面要写一个值。{usage}；详见 --help。")
            if options[name] and options[name] != value:   # 和三个脚本一样不悄悄用后一个；后面有 --help 时先显示帮助
                twice = twice or f"{name} 写了两次（{visible(options[name])} 和 {visible(value)}），不知道该用哪一个：只留一个"
            options[name] = value
        elif arg.startswith("-") and arg != "-":
            close = closest(name, names)
            raise ToolUsageError(f"不认识的选项 {arg}{f'（是不是想写 {close}？）' if close else ''}。{usage}；详见 --help。")
        else:   # 位置参数；和 retrieval_qa.py 一样先认出中文输入法打的横线（—documents、－－help）
            problem = dash_problem(arg, names) or (f"多了一个参数 {arg}" if len(options["args"]) >= positionals else None)
            if problem:
                raise ToolUsageError(f"{problem}。{usage}；详见 --help。")
            options["args"].append(arg)
    if twice:
        raise ToolUsageError(f"{twice}。{usage}；详见 --help。")
    return options


FORMULA = ("=", "+", "-", "@", "\t", "\r")   # CSV 格子以这些开头，表格软件会当公式算
MAX_CELL = 32000   # 字：Excel 一格最多 32767 个字，Python 的 csv 默认最多读 131072 个


def csv_cell(cell):
    """CSV 的一格：以公式的记号开头的文字前面加一个 '（只是文字，不会被算），太长的截短并注明；数字照原样。"""
    if not isinstance(cell, str):
        return cell
    cell = cell if len(cell) <= MAX_CELL else cell[:MAX_CELL] + "……（太长，截短了）"
    return f"'{cell}" if cell.startswith(FORMULA) else cell


def write_out(out, table, text):
    """把工具的结果写进 --out 给的文件：名字以 .csv 结尾就写表格 table（每行一个列表；带 BOM，Windows 的 Excel 才认得中文），
    否则写 Markdown 文字 text；换行原样。写不了时和三个脚本的结果写不出去一样：stderr 上一行中文，返回退出码 5
    （见 README 的命令行约定）；写好了返回 None。"""
    import csv
    from model_reply_assistant import describe_os_error
    from model_reply_assistant import EXIT_OUTPUT
    as_csv = out.lower().endswith(".csv")
    try:
        with open(out, "w", encoding="utf-8-sig" if as_csv else "utf-8", newline="") as handle:
            if as_csv:
                csv.writer(handle).writerows([csv_cell(cell) for cell in line] for line in table)
            else:
                handle.write(text)
    except OSError as error:
        print(f"错误：写不了 {out}（{describe_os_error(error, writing=True)}）。", file=sys.stderr)
        return EXIT_OUTPUT
    return None


def run_tool(main, argv=None):
    """工具共用的入口，就是三个脚本的 run_cli（model_reply_assistant.py 末尾），写出去的一切都经过 ShownSafely：
    输出用 UTF-8；用法错误一行中文、退出码 2；结果写不出去（stdout 被关掉、> /dev/full、… | head）退出码 5；
    Ctrl-C 退出码 130。都不打印 traceback。"""
    from model_reply_assistant import make_kit_error, run_cli

    def run(args):
        try:
            return main(args)
        except ToolUsageError as error:   # 工具的用法错误和脚本的一样：一行“错误：……”，退出码 2
            raise make_kit_error(str(error)) from None
        except SystemExit as stop:   # --help 打印完就退出：也要回到 run_cli，由它冲出 stdout（写不出去时同样一行中文、退出码 5）
            return stop.code or 0

    return run_cli(run, argv)


def bytecode_path(kit, name):
    """学生的机器上 Python 给套件里的 name 写字节码的地方（不用 cache_from_source：设了 PYTHONPYCACHEPREFIX 时它指向别处）。"""
    return str(Path(kit) / "__pycache__" / f"{name[:-3]}.{sys.implementation.cache_tag}.pyc")


def pyc_header(source):
    """字节码文件的头部，记着 source 现在的修改时间和大小：Python 见了，就以为后面的字节码是 source 编出来的。"""
    info = os.stat(source)
    return (importlib.util.MAGIC_NUMBER + bytes(4) + (int(info.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
            + (info.st_size & 0xFFFFFFFF).to_bytes(4, "little"))


def python_would_use(head, source):
    """字节码文件开头 16 个字节（head）说它是哪一份源代码编的：Python 只在对得上时用它（PEP 552）。"""
    flags = int.from_bytes(head[4:8], "little")
    if flags == 0:   # 按修改时间和大小
        return head[8:16] == pyc_header(source)[8:16]
    if flags == 0b11:   # 按哈希，而且要核对
        return head[8:16] == importlib.util.source_hash(Path(source).read_bytes())
    return True   # 按哈希、不核对（flags == 1），或者头部写坏了：Python 可能照用，要比


def forge_bytecode(source, pyc, change):
    """伪造字节码：把 source 的一处改掉（change = (原文, 改成)）再编译，头部写上 source 本身的修改时间和大小，
    这样 Python 以为它就是 source 编出来的，照样用它（学生真会试的花招，grade.py 要认出来）。"""
    import marshal
    code = compile(Path(source).read_text(encoding="utf-8").replace(*change), str(source), "exec", dont_inherit=True)
    Path(pyc).parent.mkdir(parents=True, exist_ok=True)
    Path(pyc).write_bytes(pyc_header(source) + marshal.dumps(code))


def own_words(*pieces):
    """检查里“学生自己写的话”（练习四的草稿、练习五的记录、练习六的摘要）：几段不到 6 个字的拼起来。套件里写着的每一段
    至少 6 个字的文字都算示范（exercise.shipped_examples），照抄示范不算做完：写成一整段，这句话自己就成了示范。"""
    return "".join(pieces)


def own_trick(number):
    """检查和建班里“学生自己写的”练习四 trick.json：编号不同，草稿就不同。草稿由不到 6 个字的几段拼成：套件里写着的每一段
    至少 6 个字的文字都算示范（exercise.shipped_examples），照抄示范不算做完，这份草稿自己就不能是一段示范。"""
    who = ("老用户", "个人版用户", "付费团队", "老会员", "学校", "企业", "续费的人", "老客户", "内测用户", "合作伙伴")[number % 10]
    how = ("也能", "同样可以", "还能再", "都可以")[number // 10 % 4]
    return {"status": "draft", "draft": who + how + "试用 7 天。", "sources": ["D01#1"], "why": "原文" + "只说新注册的团队"}


def build_class(folder, size=30):
    """在 folder 里建一个班：size 份套件副本，一半是老实做练习的，一半用了学生真会试的花招（第 31 份起是故意做坏的：
    一千多层的文件夹、6 GB 的稀疏文件、一万个小文件……，用完要用 remove_tree 删）。
    返回 {副本名: 要看一眼里应当出现的原因，老实的是 None}。grade.py 的检查和 bench.py 的计时用的是同一个班。"""
    import importlib.util
    import py_compile
    import grade
    folder = Path(folder)
    # 和 grade.py 比的是同一批文件，老实的副本才会一处不差。老师提交进仓库的自己做的练习（checks/.exercise-done/、
    # trick.json……）不带进班里，资料用发布版的
    names = sorted(name for name in grade.teacher_files() if name == "retrieval_documents.json" or not grade.is_student_file(name))
    trial = own_trick(0)

    def copy(name):
        kit = folder / name
        for file in names:
            (kit / file).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shipped_source(file), kit / file)
        return kit

    def edit_records(kit, change):
        path = kit / "retrieval_documents.json"
        records = json.loads(path.read_text(encoding="utf-8"))
        change(records)
        path.write_text(json.dumps(records, ensure_ascii=False, indent=2), encoding="utf-8")

    def write(path, text):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    expected = {}
    honest = ["原样", "练习一", "练习二存档", "练习三存档", "Windows", "运行过", "课文的文件", "练习四", "备份", "怪文件名"]
    for number, way in enumerate(honest * 3, 1):
        if len(expected) >= size // 2:
            break
        name = f"h{number:02d}-{way}"
        kit, expected[name] = copy(name), None
        if way == "练习一":
            edit_records(kit, lambda records: records[0]["keywords"].append("免费用多久"))
        elif way in ("练习二存档", "练习三存档"):   # 做完时 exercise.py 存下的样子，资料已经改回
            done = json.loads(SHIPPED_DOCUMENTS.read_text(encoding="utf-8"))
            if way == "练习二存档":
                done[0]["text"] = done[0]["text"].replace("7 天", "14 天")
            else:
                done.pop(0)
            write(kit / "checks" / ".exercise-done" / f"exercise-{2 if way == '练习二存档' else 3}.json",
                  json.dumps(done, ensure_ascii=False))
            write(kit / "checks" / ".exercise-progress.json", f'{{"done": [{2 if way == "练习二存档" else 3}]}}')
        elif way == "Windows":   # 换行符是 CRLF，有的文件带 BOM
            for file in ("retrieval_qa.py", "README.md", "lessons/03-retrieval-qa.md"):
                data = (kit / file).read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
                (kit / file).write_bytes((b"\xef\xbb\xbf" if file.endswith(".py") else b"") + data)
        elif way == "运行过":
            for file in ("retrieval_qa.py", "model_reply_assistant.py", "reply_assistant.py"):
                py_compile.compile(str(kit / file), cfile=bytecode_path(kit, file))
        elif way == "课文的文件":
            for file in ("good.json", "answer.json", "bad-evidence.json", "obey-send.json", "broken.json"):
                write(kit / file, "{}\n")
        elif way == "练习四":
            write(kit / "trick.json", json.dumps(own_trick(number), ensure_ascii=False))
        elif way == "备份":
            write(kit / "retrieval_documents.backup.json", SHIPPED_DOCUMENTS.read_text(encoding="utf-8"))
        elif way == "怪文件名":
            write(kit / "笔记\n第一周|\x1b[31m.txt", "记下的东西\n")
    source = folder / "h01-原样"
    tricks = [
        ("伪造字节码", "字节码有问题"),
        ("裸字节码", "加了 Python 文件"),
        ("加了模块", "加了 Python 文件"),
        ("改了代码", "改了 Python 文件"),
        ("改了检查", "改了检查或课文"),
        ("改了课文", "改了检查或课文"),
        ("资料软链接", "资料是链接"),
        ("资料硬链接", "资料是链接"),
        ("草稿软链接", "有链接"),
        ("存档软链接", "有链接"),
        ("草稿抄的", "和别的副本一样"),
        ("改动一样", "和别的副本一样"),
        ("只有自报", "练习只有自报"),
        ("命名管道", "有命名管道或设备"),
        ("套了一层", "放深了一层"),
        # 班里第 31 份起：故意做坏的副本，一份都不能让整张表作废，也不能让老师等
        ("很深的文件夹", "加了 Python 文件"),
        ("稀疏大文件", "文件大得不正常"),
        ("一万个小文件", "加了 Python 文件"),
        ("包装成虚拟环境", "加了 Python 文件"),
        ("git 设置", "git 设置会执行命令"),
    ]
    for number, (way, reason) in enumerate(tricks[:size - len(expected)], 1):
        name = f"t{number:02d}-{way}"
        kit, expected[name] = copy(name), reason
        if way == "伪造字节码":   # 另一份源代码编出的字节码，头部照抄没改过的 retrieval_qa.py 的时间和大小，Python 会用它
            forge_bytecode(kit / "retrieval_qa.py", bytecode_path(kit, "retrieval_qa.py"), ("MAX_HITS = 3", "MAX_HITS = 30"))
        elif way == "裸字节码":
            (kit / "checks" / "difflib.pyc").write_bytes(importlib.util.MAGIC_NUMBER + bytes(12))
        elif way == "加了模块":   # 它的 trick.json 被“草稿抄的”原样抄走：两边都耍了花招
            write(kit / "unicodedata.py", "# 悄悄换掉标准库\n")
            write(kit / "trick.json", json.dumps(trial, ensure_ascii=False))
        elif way in ("改了代码", "改动一样"):   # 两个人交上来一模一样的改动
            write(kit / "model_reply_assistant.py", "# 改过的\n")
        elif way == "改了检查":
            write(kit / "checks" / "eval_questions.json", "[]\n")
        elif way == "改了课文":
            write(kit / "lessons" / "03-retrieval-qa.md", "# 答案都在这里\n")
        elif way == "资料软链接":
            (kit / "retrieval_documents.json").unlink()
            link_to_classmate(kit / "retrieval_documents.json", folder / "h02-练习一" / "retrieval_documents.json")
        elif way == "资料硬链接":   # 硬链接分不出谁抄谁：被链接的那份也会被点名，所以链接到另一个耍花招的副本
            (kit / "retrieval_documents.json").unlink()
            os.link(folder / "t04-改了代码" / "retrieval_documents.json", kit / "retrieval_documents.json")
        elif way == "草稿软链接":
            link_to_classmate(kit / "trick.json", folder / "h08-练习四" / "trick.json")
        elif way == "存档软链接":
            (kit / "checks" / ".exercise-done").mkdir()
            link_to_classmate(kit / "checks" / ".exercise-done" / "exercise-2.json",
                              folder / "h03-练习二存档" / "checks" / ".exercise-done" / "exercise-2.json")
            write(kit / "checks" / ".exercise-progress.json", '{"done": [2]}')
        elif way == "草稿抄的":
            shutil.copyfile(folder / "t03-加了模块" / "trick.json", kit / "trick.json")
        elif way == "只有自报":
            write(kit / "checks" / ".exercise-progress.json", '{"done": [2, 3, 5]}')
        elif way == "命名管道":
            if hasattr(os, "mkfifo"):
                os.mkfifo(kit / "checks" / "notes.fifo")
            else:   # Windows 上没有命名管道：换成同样要看一眼的链接
                expected[name] = "有链接"
                (kit / "lessons" / "glossary.md").unlink()
                link_to_classmate(kit / "lessons" / "glossary.md", source / "lessons" / "glossary.md")
        elif way == "套了一层":
            shutil.move(str(kit), str(folder / "inner"))
            kit.mkdir()
            shutil.move(str(folder / "inner"), str(kit / "kit"))
        elif way == "很深的文件夹":   # 一千一百层（os.makedirs 是递归的，只能一层层建），最里面藏一个 .py
            deep = kit / "笔记"
            try:
                for _ in range(1100):
                    deep.mkdir()
                    deep = deep / "d"
            except OSError:   # Windows 没开长路径时最多 260 个字：建到系统允许的深度，往回留几层放文件
                deep = deep.parent.parent.parent.parent
            write(deep / "hook.py", "")
        elif way == "稀疏大文件":   # 6 GB 的课文：不占磁盘（类 Unix 系统上），读出来却有这么大
            with open(kit / "lessons" / "glossary.md", "r+b") as handle:
                handle.truncate(6 * 2 ** 30 if os.name == "posix" else 64 * 2 ** 20)
        elif way == "一万个小文件":
            (kit / "笔记").mkdir()
            for index in range(10000):
                (kit / "笔记" / f"{index}.py").write_bytes(b"")
        elif way == "包装成虚拟环境":   # pyvenv.cfg 加 bin/，像虚拟环境；顶层的 __init__.py 却让 Python 把它当 json 导入
            write(kit / "json" / "pyvenv.cfg", "home = /usr/bin\n")
            (kit / "json" / "bin").mkdir()
            write(kit / "json" / "__init__.py", "loads = lambda text: {}\n")
        elif way == "git 设置":   # 老师在副本里敲 git status 就会执行：七十 KB 的注释后面
            write(kit / ".git" / "config", "# " + "x" * 70000 + "\n[core]\n\tfsmonitor = touch /tmp/pwned\n")
    return expected


def remove_tree(folder):
    """删掉 folder 和里面的一切，和 shutil.rmtree 一样，只是不递归：一千多层的文件夹也删得掉
    （shutil.rmtree、os.walk 在 Python 3.12 以前都是递归的）。链接只删链接本身。"""
    pending = [Path(folder)]
    while pending:
        path = pending[-1]
        children = list(path.iterdir())
        inner = [child for child in children if child.is_dir() and not child.is_symlink()]
        for child in children:
            if child not in inner:
                child.unlink()
        if inner:
            pending += inner
        else:
            path.rmdir()
            pending.pop()
