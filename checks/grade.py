"""全班一起看：用老师手里这份可信的代码和检查，给每个学生的套件副本各出一行。

    $ python3 checks/grade.py 作业/张三 作业/李四 …          # Markdown：列的说明、表格、一行总结，写到 stdout
    $ python3 checks/grade.py 作业/* --out 成绩.csv           # CSV（带 BOM，Excel 能直接打开；数字就是数字）
    $ python3 checks/grade.py 作业/* --out 成绩.md            # 同样的 Markdown 写进文件

每个参数一行，从不因为一个副本不对就整张表作废：不是文件夹、是 zip 压缩包、不像套件、里面有两份套件的，那一行写明原因；
套件放深了一两层的（压缩包解开两次），找到它照样判，并注明。学生副本里的代码一行也不运行、不导入：读的只是它的资料文件、trick.json、进度文件，
以及每个文件的内容（和老师的比，换行符 CRLF/LF、开头的 BOM 不算不同）。命名管道、设备一律不打开，不会卡住。
练习只凭副本里查得到的证据算“做完”：现在的资料和 trick.json，以及练习一、二、三、五做完时 exercise.py 存下的资料
（checks/.exercise-done/，用老师的检查重判）。进度文件 checks/.exercise-progress.json 是学生自己也能写的，
只有它这么说的“做完又改回了”标成“自报”。不联网，不需要密钥，不修改学生的文件。正常出表时退出码为 0，用法不对为 2，--out 写不出去为 5。
"""
import functools
import hashlib
import json
import os
import re
import stat
import sys
from pathlib import Path

from kit_helpers import ROOT, SHIPPED_FILES, as_committed, is_linked, link_description, parse_tool_options, python_would_use, run_tool, write_out

import acceptance
import evaluate
import exercise
import retrieval_qa
import transcripts
from model_reply_assistant import one_line, read_head, visible
from model_reply_assistant import KitError

USAGE = "用法：python3 checks/grade.py 学生的套件文件夹 … [--out FILE.md | FILE.csv] [--details]"
DATA = "retrieval_documents.json"
# 学生照课文自己写的文件：不算“和老师的套件不同”
OWN_FILES = exercise.OWN_FILES   # 练习自己写的文件：是链接（别人的）就不算分
STUDENT_FILES = {DATA, *OWN_FILES.values()} | {exercise.saved_copy(number, Path("checks")).as_posix() for number in exercise.SAVED}
# 学生自己写的（练习做完时存的资料也是）；课文让存的文件见 lesson_files()
SKIPPED_NAMES = {".git", "__pycache__", ".exercise-progress.json", ".DS_Store", "Thumbs.db", "__MACOSX",
                 ".venv", "venv", "node_modules", ".idea", ".vscode"}   # 虚拟环境、编辑器的文件夹：和作业无关，也不会被套件导入
APPLE_DOUBLE = "._"   # macOS 打包时给每个文件配的附属文件（._retrieval_qa.py）：不是 Python 代码，也导入不了
GIT = "git"   # 老师的套件是 git 仓库时，用它列出跟踪的文件、改过没提交的文件
MAX_LISTED = 15   # “和老师的套件不同”最多列这么多条，其余只说个数
# 新加了就要看一眼：Python 启动时、导入时会自动读它们
RISKY = (".py", ".pth", ".pyc", ".pyo", ".so", ".pyd")   # Python 会自动导入或执行的文件
LEGEND = [
    "副本：相对于这些副本共同的文件夹。资料：能不能读；读不了时是程序自己的报错（截短）。",
    "练习 1–7：“做完”= 副本里的资料、trick.json、pairs.json、domains.json 现在就能证明；“做完，未改回”= 练习二、三、五做完还没改回去；"
    "“做完，已改回”= 做完时存下的资料（checks/.exercise-done/）用老师的检查重判过；“做完（有存档）”= 现在的资料看不出来，"
    "做完时存下的资料重判过；"
    "“自报已改回”= 只有学生自己的进度文件这么说，老师核实不了；空 = 没做。练习 4 的“做完”只证明检查判它为 draft、写了 why、"
    "不是照抄课文或原文：草稿是真错还是本来就对，程序分不出，用 --details 看草稿和 why。",
    "recall@3、精确率：关键词检索在 checks/eval_questions.json 上的成绩。验收：离线验收记录通过几行。",
    "和老师的套件不同：加了、改了、缺了的文件（内容按 SHA-256 比；和老师 git 仓库里以前提交过的某一版一样的不算改了，另起一条“另有旧版本的文件”）；新加的 .py/.pth 会被 Python 自动导入，标“风险”；"
    "链接（符号链接、硬链接）写明指向哪里或和几个文件共用，资料或 trick.json 是链接的不算分。",
    "要看一眼：这一行为什么需要老师打开副本看看（改了 Python 文件、检查或课文，有链接，和别的副本改得一模一样，练习只有自报……）。",
]


def fingerprint(path, data=None):
    """文件内容（data，或者读 path）按 as_committed 换过以后的 SHA-256。"""
    return hashlib.sha256(as_committed(path.read_bytes() if data is None else data)).hexdigest()


@functools.lru_cache(maxsize=None)
def teacher_fingerprint(name):
    return fingerprint(ROOT / name)


@functools.lru_cache(maxsize=None)
def teacher_bytes(name):
    return (ROOT / name).read_bytes()


def same_as_teacher(path, name):
    """和老师的这个文件一样（BOM、换行符不算不同）。多数副本的多数文件一字不差：先直接比字节，不一样再比指纹
    （全班 30 份、每份 2.5 MB 时省下一半时间）。"""
    data = path.read_bytes()
    return data == teacher_bytes(name) or fingerprint(path, data) == teacher_fingerprint(name)


def kit_files(folder):
    """套件文件夹里的文件：{相对路径: lstat 结果}。不进 .git、__pycache__、__MACOSX（macOS 的压缩包在别处解开时多出来的），
    不跟着链接走，什么都不打开。"""
    found = {}
    for directory, names, files in os.walk(folder):
        names[:] = sorted(name for name in names
                          if name not in SKIPPED_NAMES and not is_virtual_environment(Path(directory) / name, folder))
        for name in files + [name for name in names if os.path.islink(os.path.join(directory, name))]:
            if name not in SKIPPED_NAMES and not name.startswith(APPLE_DOUBLE):
                path = Path(directory) / name
                found[path.relative_to(folder).as_posix()] = os.lstat(path)
    return found


def is_virtual_environment(folder, copy):
    """python3 -m venv 建的文件夹（不管叫 env、.venv 还是别的）：顶层有 pyvenv.cfg（PEP 405），还有 bin/ 或 Scripts/，
    和作业无关，套件也不从里面导入。copy 是副本的根：老师的套件里也有的文件夹（checks/、lessons/）放一个 pyvenv.cfg
    也不算，不然改过的检查就藏起来了。是链接的不算：链接另有一条。"""
    if folder.is_symlink() or not (folder / "pyvenv.cfg").is_file():
        return False
    if not ((folder / "bin").is_dir() or (folder / "Scripts").is_dir()):
        return False
    relative = folder.relative_to(copy).as_posix() + "/"
    return not any(name.startswith(relative) for name in teacher_files())


@functools.lru_cache(maxsize=None)   # 老师这一份只看一次，不是每个副本看一次
def teacher_files():
    """老师这份套件的文件：是 git 仓库就用 git 跟踪的文件（老师自己放进来的成绩表不算）；不是（下载的压缩包）就用发布的
    文件清单 SHIPPED_FILES 里现有的：老师自己照课文做过练习、存下的 记录.csv、trick.json 不算套件的文件。"""
    listed = git_output("ls-files", "-z") or b""
    return {name for name in listed.decode("utf-8").split("\0") if name} or {name for name in SHIPPED_FILES if (ROOT / name).is_file()}


@functools.lru_cache(maxsize=None)
def teacher_history():
    """老师的 git 仓库里每个文件提交过的各个版本：{路径（相对于套件的根目录）: {内容的 git 编号}}。不是 git 仓库、没装 git
    时是空的。套件放在更大的仓库的子文件夹里时，仓库里的路径要去掉前面那一段。"""
    prefix = (git_output("rev-parse", "--show-prefix") or b"").decode("utf-8").strip()
    listed = git_output("log", "--all", "--no-renames", "--format=", "--raw", "--no-abbrev", "-z") or b""
    fields = listed.decode("utf-8", errors="replace").split("\0")   # 每处改动两段：“:旧模式 新模式 旧编号 新编号 状态”、路径
    versions = {}
    for change, path in zip(fields[0::2], fields[1::2]):
        if change.startswith(":") and path.startswith(prefix):
            versions.setdefault(path[len(prefix):], set()).add(change.split()[3])
    return versions


def earlier_version(path, name):
    """path 的内容是老师仓库里 name 以前提交过的某个版本（BOM、CRLF 不算不同，见 as_committed）。按内容的 git 编号比，
    和 git hash-object 算法一样：对得上就是一字不差的旧版本，不是看着像。"""
    data = as_committed(path.read_bytes())
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() in teacher_history().get(name, ())


def teacher_edits():
    """老师这份套件里改过、还没提交的文件（git 跟踪的）；不是 git 仓库、没装 git 就是空列表。"""
    status = git_output("status", "--porcelain", "--untracked-files=no") or b""
    return [line[3:] for line in status.decode("utf-8", errors="replace").splitlines()]


def git_output(*args):
    """在老师这份套件里运行 git，返回 stdout 的字节；不是 git 仓库（下载的压缩包）或没装 git 时返回 None，当作不是仓库。"""
    import subprocess
    try:
        done = subprocess.run([GIT, "-C", str(ROOT), *args], capture_output=True)
    except OSError:   # 没装 git（Windows、macOS 上常见）：当作不是仓库，不抛出一大段 traceback
        return None
    return done.stdout if done.returncode == 0 else None


def compare_with_teacher(folder, bytecode):
    """和老师的套件比：返回 (差别的说明列表, 要看一眼的原因列表)。整个没带的文件夹（lessons/、checks/……）只说一次。
    bytecode：这个副本里有问题的字节码（forged_bytecode 给全班一起查好的）。"""
    mine = {name for name in teacher_files() if not is_student_file(name)}
    theirs = kit_files(folder)
    differences, concerns, absent, older = [], [], set(), []
    for name in sorted(mine | set(theirs)):
        info = theirs.get(name)
        if is_student_file(name):   # 学生照课文存的文件不算差别；可它是链接（指向别人的），就是拿别人的作业
            if info is not None and is_linked(folder / name):
                differences.append(f"{name}（{link_description(folder / name)}）")
                concerns.append(("有链接", name))
            continue
        if info is None:
            top = name.split("/")[0]
            if "/" in name and (not (folder / top).exists() or (folder / top).is_symlink()):   # 没带，或者是链接（链接另有一条）
                if top not in absent and not (folder / top).is_symlink():
                    differences.append(f"{top}/（整个没带）")
                absent.add(top)
            else:
                differences.append(f"{name}（缺）")
        elif stat.S_ISLNK(info.st_mode):
            differences.append(f"{name}（{link_description(folder / name)}）")
            concerns.append(("有链接", name))
        elif not stat.S_ISREG(info.st_mode):
            differences.append(f"{name}（不是普通文件）")
            concerns.append(("有命名管道或设备", name))
        elif name not in mine:
            risky = name.endswith(RISKY)
            differences.append(f"{name}（加的{'，风险' if risky else ''}）")
            if risky:
                concerns.append(("加了 Python 文件", name))
        elif info.st_nlink > 1:   # 硬链接：和另一个文件（多半是别人的副本）共用同一份内容
            differences.append(f"{name}（{link_description(folder / name)}）")
            concerns.append(("有链接", name))
        elif not same_as_teacher(folder / name, name):
            if earlier_version(folder / name, name):   # 学生拿的是老师以前发的套件：不是改了，更不是和同学抄了一样的改动
                older.append(name)
                continue
            differences.append(f"{name}（改了）")
            if name.endswith(RISKY):
                concerns.append(("改了 Python 文件", name))
            elif name.startswith(("checks/", "lessons/")):   # 改了检查的数据或课文：检查和练习的结论可能跟着变
                concerns.append(("改了检查或课文", name))
    differences = shortened(differences)   # 整个副本是旧版本、带着一堆别的文件时，一格写不下
    if older:   # 旧版本的文件另起一条：早克隆的副本有二十几个，不能把真正的改动挤出这一格
        differences.append(f"（另有旧版本的文件 {len(older)} 个：{'、'.join(older[:3])}{'……' if len(older) > 3 else ''}）")
    kept = sorted(name for name in theirs if name in lesson_files())
    if kept:   # 照课文存的文件：另起一条说个数，不和真正的差别混在一起
        differences.append(f"（另有课文让存的文件 {len(kept)} 个）")
    git_config = folder / ".git" / "config"
    if git_config.is_file() and not git_config.is_symlink():   # 老师在副本里敲 git status，这些设置就会执行命令
        text = git_config.read_bytes()[:65536].decode("utf-8", errors="replace").lower()
        risky = [key for key in ("fsmonitor", "hookspath", "sshcommand", "pager", "editor", "textconv", "askpass")
                 if key in text]
        if risky or any(hook.is_file() and not hook.name.endswith(".sample") for hook in (folder / ".git" / "hooks").glob("*")):
            concerns.append(("git 设置会执行命令", "、".join(risky) or "hooks"))
    for name, why in bytecode:
        differences.append(f"{name}（{why}，风险）")
        concerns.append(("字节码有问题", f"{name}（{why}）"))
    return differences, concerns


def bytecode_folders(folder):
    """副本里的 __pycache__ 文件夹，排好序。和 kit_files 一样不跟着链接走、不进虚拟环境：套件不从那里导入，
    一个新建的虚拟环境就有上千个字节码文件。"""
    found = []
    for directory, names, _ in os.walk(folder):
        names[:] = [name for name in names if not is_virtual_environment(Path(directory) / name, folder)]
        found += [Path(directory) / name for name in names if name == "__pycache__" and not os.path.islink(Path(directory) / name)]
    return sorted(found)


def forged_bytecode(folders):
    """各个副本 __pycache__ 里会被 Python 用上、却不是副本自己的源代码编出来的字节码：{副本文件夹: [(相对路径, 原因)]}。
    - 头部记着的源代码大小和修改时间（或哈希）和现在的源代码对不上的，Python 会重新编译、不用它，不算（学生改过又改回的常见）；
    - 对得上的，用老师这台机器的 Python 编译源代码，和字节码比代码本身（伪造的字节码可以把头部写得和源代码一样，骗过 Python）；
    - 别的 Python 版本写的，这个版本读不了、也不会用，跳过。
    比较在子进程里做（见 compare_bytecode）：字节码是学生给的数据，几十个字节就能让反序列化要几 GB 内存。
    全班的字节码交给同一个子进程：运行过套件的副本都有字节码，源代码多半一样，一份源代码只编译一次
    （30 份运行过套件和练习的副本：每份一个子进程时 grade.py 要 2.7 秒，一起查 0.6 秒左右）。"""
    import importlib.util
    found, candidates = {folder: [] for folder in folders}, []
    for folder in folders:
        for cache in bytecode_folders(folder):
            for pyc in sorted(cache.iterdir()):
                name, source = pyc.relative_to(folder).as_posix(), cache.parent / (pyc.name.split(".")[0] + ".py")
                if pyc.is_symlink() or not pyc.is_file():
                    found[folder].append((name, "是链接或不是普通文件"))
                elif not source.is_file() or source.is_symlink():
                    found[folder].append((name, "没有对应的源代码"))
                else:
                    with open(pyc, "rb") as handle:
                        head = handle.read(16)
                    if head[:4] != importlib.util.MAGIC_NUMBER or not python_would_use(head, source):
                        continue
                    optimize = 2 if ".opt-2." in pyc.name else 1 if ".opt-1." in pyc.name else 0
                    candidates.append((folder, name, str(pyc), str(source), optimize))
    verdicts = compare_bytecode([item[2:] for item in candidates])
    for folder, name, pyc, _, _ in candidates:
        if verdicts[pyc]:
            found[folder].append((name, verdicts[pyc]))
    return found


BYTECODE_CHECKER = r"""
import hashlib, json, marshal, sys
try:   # 只在类 Unix 系统上有：反序列化要的内存超过 1 GiB 就失败，而不是把机器拖垮
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))
except Exception:
    pass
compiled = {}
for pyc, source, optimize in json.load(sys.stdin):
    text = open(source, "rb").read()
    key = (hashlib.sha256(text).hexdigest(), optimize)
    if key not in compiled:   # 三十份副本的源代码多半一样：每份只编译一次
        try:
            compiled[key] = compile(text, source, "exec", dont_inherit=True, optimize=optimize)
        except (SyntaxError, ValueError):
            compiled[key] = None
    try:
        same = marshal.loads(open(pyc, "rb").read()[16:]) == compiled[key]
    except Exception:
        same = False
    print("ok" if same else "nosource" if compiled[key] is None else "bad", flush=True)
"""
# 秒：全班的字节码一起比，平常不到半秒（30 份运行过套件的副本 0.2 秒左右）；卡在一份上这么久，那一份算不正常，剩下的接着比
BYTECODE_SECONDS = 20
BYTECODE_VERDICTS = {"ok": "", "nosource": "源代码编译不了，字节码却在", "bad": "字节码和副本里的源代码对不上",
                     "died": "读这份字节码时要的内存或时间不正常"}


def compare_bytecode(items):
    """[(字节码, 源代码, optimize)] -> {字节码: 原因（一样就是空字符串）}。在一个子进程里一份份比；子进程在某一份上
    死掉或超时，那一份就是“不正常”，剩下的换一个子进程接着比。"""
    import subprocess
    verdicts, rest = {}, list(items)
    while rest:
        try:
            # -I：不看环境变量和用户的 site-packages；-S：也不加载 site（只用标准库，每个子进程少花几十毫秒）
            done = subprocess.run([sys.executable, "-I", "-S", "-c", BYTECODE_CHECKER], input=json.dumps(rest).encode("utf-8"),
                                  capture_output=True, timeout=BYTECODE_SECONDS)
            answers = done.stdout.decode("ascii", errors="replace").split()
        except subprocess.TimeoutExpired as error:
            answers = (error.stdout or b"").decode("ascii", errors="replace").split()
        for (pyc, _, _), answer in zip(rest, answers):
            verdicts[pyc] = BYTECODE_VERDICTS.get(answer, BYTECODE_VERDICTS["bad"])
        if len(answers) >= len(rest):
            break
        verdicts[rest[len(answers)][0]] = BYTECODE_VERDICTS["died"]
        rest = rest[len(answers) + 1:]
    return verdicts


def is_student_file(name):
    return name in STUDENT_FILES or name in lesson_files() or name.endswith(".backup.json")


@functools.lru_cache(maxsize=None)
def lesson_files():
    """课文让学生存的文件：老师这份套件的课文里 ```json file=名字 块的名字（good.json、answer.json、obey-send.json……）。
    从课文里读出来，不靠猜：课文加了一个文件，这里自动就认得。"""
    names = set()
    for lesson in sorted((ROOT / "lessons").glob("*.md")):
        names |= {step[2] for step in transcripts.parse_markdown(lesson) if step[0] == "file"}   # 和课文执行器读的是同一批块
    return frozenset(names)


def find_kit(folder):
    """(套件所在的文件夹, “要看一眼”的原因, 说明)；文件夹本身就是套件时原因和说明都是空的。不像，就往下找一层、再找一层
    （压缩包解开两次，kit-main/kit-main/ 很常见），正好找到一份就用它；找到不止一份，说出是哪几个，不替老师挑。"""
    if looks_like_kit(folder):
        return folder, "", ""
    for depth, deeper in ((1, "放深了一层"), (2, "放深了两层")):
        found = [kit for kit in sorted(folder.glob("/".join(["*"] * depth)))   # 链接过去的文件夹不进：那是别人的东西
                 if kit.is_dir() and not kit.is_symlink() and not kit.parent.is_symlink() and looks_like_kit(kit)]
        if len(found) == 1:
            return found[0], deeper, f"套件在 {found[0].relative_to(folder).as_posix()}/ 里"
        if found:
            shown = "、".join(f"{kit.relative_to(folder).as_posix()}/" for kit in found[:5])
            return None, "不止一份套件", f"里面有 {len(found)} 份套件（{shown}），不知道判哪一份：删掉多余的，或分开交"
    return None, "不像套件", "文件夹里没有 retrieval_documents.json，也没有 retrieval_qa.py"


def looks_like_kit(folder):
    return (folder / DATA).exists() or (folder / DATA).is_symlink() or (folder / "retrieval_qa.py").exists()


def grade(found, forged):
    """一个学生副本：返回一行的各项（dict）。found：这个文件夹的 find_kit 结果；forged：{副本文件夹: 有问题的字节码}，
    全班一起查好的（forged_bytecode）。
    资料文件在这一行里只读一次：练习、评测、验收都要用它。"""
    from unittest import mock
    once = functools.lru_cache(maxsize=None)(retrieval_qa.read_and_check)
    with mock.patch.object(retrieval_qa, "read_and_check", once):
        return grade_copy(found, forged)


def grade_copy(found, forged):
    """grade() 的正文。行里的“套件”是找到的套件文件夹（没找到是 None）：后面比副本之间、--details 都用它，不再找一遍。"""
    kit, kind, note = found
    row = {"资料": "", "练习": {}, "recall": None, "precision": None, "验收": None, "不同": [], "要看": [], "套件": kit}
    if kit is None:
        row.update(资料="—", 要看=[(kind, note)])
        return row
    if kind:
        row["要看"].append((kind, note))
    row["不同"], concerns = compare_with_teacher(kit, forged[kit])
    row["要看"] += concerns
    data = kit / DATA
    if is_linked(data):   # 资料是别人的文件：不是这个副本里的证据，不算分
        row.update(资料=f"{link_description(data)}，不算本人的资料")
        row["要看"].append(("资料是链接", "练习不算分"))
        return row
    linked = {number for number, name in OWN_FILES.items() if is_linked(kit / name)}   # 别人的 trick.json、pairs.json、domains.json：那个练习不算分
    try:
        documents = retrieval_qa.load_documents(str(data))
    except KitError as error:
        reason = str(error).removeprefix("错误：").replace(f"资料文件 {data}", "")   # 长长的路径换成一行里看得见的原因
        row.update(资料="读不了：" + one_line(reason.lstrip("：:，, "), 60))
        row["要看"].append(("资料读不了", ""))
        return row
    row["资料"], row["自己加的记录"] = "能读", own_records(documents)   # 后者给 same_as_another 比：资料每行只读一次
    claimed = exercise.remembered_done(True, kit / "checks" / exercise.PROGRESS.name)   # 学生自己写的进度：只当作自报
    for number in exercise.EXERCISES:
        done = False if number in linked else exercise.CHECKS[number](documents, data)[0]
        if done:
            row["练习"][number] = "做完，未改回" if number in exercise.RESTORE else "做完"
        elif number in exercise.SAVED and exercise.shown_by_saved_copy(number, kit / "checks", documents):   # 链接的、对不上的不算
            restored = number in exercise.RESTORE and exercise.restored(number, documents)
            row["练习"][number] = "做完，已改回" if restored else "做完（有存档）"
        elif number in exercise.RESTORE and number in claimed and exercise.restored(number, documents):
            row["练习"][number] = "自报已改回"
    unreadable = [name for number, name in OWN_FILES.items()   # 做了练习、文件却存坏了（GBK、语法错）：不能只是空着一格
                  if number not in linked and exercise.own_file_problem(number, kit)]
    if unreadable:
        row["要看"].append(("练习的文件读不了", "、".join(unreadable) + "（--details 或 exercise.py 说原因）"))
    reported = [str(number) for number, state in row["练习"].items() if state == "自报已改回"]
    if reported:   # 谁都能手写进度文件：老师问一句，或看看副本
        row["要看"].append(("练习只有自报", "、".join(f"练习{number}" for number in reported)))
    questions = json.loads(evaluate.QUESTIONS.read_text(encoding="utf-8-sig"))
    metrics, _ = evaluate.measure(questions, lambda q: [hit["id"] for hit in retrieval_qa.retrieve(q, documents)])
    row["recall"], row["precision"] = metrics["recall"], metrics["precision"]
    accepted = [acceptance.judge(case, *acceptance.run_case(case["question"], False, str(data)), False)
                for case in acceptance.CASES]
    row["验收"] = (sum(1 for line in accepted if not line[-1].startswith("否")), len(accepted))
    if row["验收"][0] < row["验收"][1]:
        failed = [f"{one_line(line[0], 20)}（{one_line(line[-1].removeprefix('否：'), 40)}）" for line in accepted
                  if line[-1].startswith("否")]
        row["要看"].append(("验收没过", "、".join(failed)))
    return row


def rows_for(arguments):
    """每个参数一行：[(名字, 行)]。名字相对于这些参数共同的文件夹。"""
    unique = list(dict.fromkeys(os.path.abspath(argument) for argument in arguments))   # 不跟着链接走：链接就是链接
    paths = [Path(path) for path in unique]
    common = Path(os.path.commonpath(unique)) if len(paths) > 1 else paths[0].parent
    folders = [path for path in paths if path.is_dir() and not path.is_symlink()]
    found = {folder: find_kit(folder) for folder in folders}   # 每个文件夹只找一次套件
    forged = forged_bytecode(list(dict.fromkeys(kit for kit, _, _ in found.values() if kit)))
    result = []
    for path in paths:
        name = os.path.relpath(path, common) if path != common else str(path)
        if path.is_symlink():   # 整个副本指向别人的文件夹：一行也不判，说明指向哪里
            result.append((name, {"资料": "—", "不同": [f"整个文件夹是{link_description(path)}"],
                                  "要看": [("有链接", "整个文件夹是链接，不算分")]}))
        elif not path.exists():
            result.append((name, {"资料": "—", "要看": [("找不到", "没有这个文件夹")]}))
        elif path.name in SKIPPED_NAMES or path.name.startswith(APPLE_DOUBLE):   # 作业/* 也会选中班级文件夹里的这些
            made_by = "macOS 打包时留下的" if path.name == "__MACOSX" or path.name.startswith(APPLE_DOUBLE) else "系统或工具自动生成的"
            result.append((name, {"资料": "—", "要看": [("跳过", f"{made_by}，不是谁的作业")]}))
        elif is_zip(path):   # 交来的是压缩包：说清要先解开，不要只说“不是文件夹”
            result.append((name, {"资料": "—", "要看": [("跳过", "是 zip 压缩包：先解压，再把解开的文件夹交给 grade.py")]}))
        elif not path.is_dir():
            result.append((name, {"资料": "—", "要看": [("跳过", "不是文件夹（比如上次写出的成绩表）")]}))
        else:
            result.append((name, grade(found[path], forged)))
    same_as_another(result)
    same_file_as_another(result)
    return result


def is_zip(path):
    """交来的 .zip 压缩包：扩展名是 .zip、开头也真是 zip 的标记 PK\\x03\\x04。Excel、Word 的文件也是 zip 格式，
    扩展名不同，不说它是压缩包。命名管道、设备不打开。"""
    try:
        return path.suffix.lower() == ".zip" and path.is_file() and not path.is_symlink() and read_head(path, 4)[:4] == b"PK\x03\x04"
    except OSError:
        return False


def same_file_as_another(result):
    """资料、trick.json 或练习存档其实是另一个副本里的文件：链接过去的一边点名它指向谁的；硬链接分不出谁抄了谁，
    两边都点名对方。被符号链接指着的一边不点名：它多半是被抄的那个。"""
    owners = {}
    for name, row in result:
        kit = row.get("套件")   # 只有判了的副本才有；整个链接过去的那一行已经说了指向谁
        for file in sorted(STUDENT_FILES) if kit else []:
            try:
                info = os.stat(kit / file)   # 跟着链接走到真正的文件：同一个文件的设备号和 inode 相同
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                borrowed = (kit / file).is_symlink() or info.st_nlink > 1   # 这一边是链接：要点名另一边
                owners.setdefault((info.st_dev, info.st_ino), []).append((name, row, file, borrowed, (kit / file).is_symlink()))
    for shared in owners.values():
        for name, row, file, borrowed, _ in shared:
            others = [f"{other} 的 {their}" for other, _, their, _, symlink in shared if other != name and not symlink]
            if borrowed and others:
                row["要看"].append(("和别的副本是同一个文件", f"{file}（{'、'.join(others)}）"))


def same_as_another(result):
    """几个副本里改了的同一个套件文件一模一样，或练习四、六自己写的 trick.json、pairs.json 意思一样（空白、字段顺序不算），
    或练习四的草稿、练习五的存档、资料里自己加的记录的正文一样：在“要看一眼”里点名另一个副本。加的文件（验收记录 记录.csv 这种输出、.venv……）、
    资料文件和照课文存的文件不算：大家照着同一篇课文做练习，本来就一样。"""
    owners = {}
    for name, row in result:
        kit = row.get("套件")
        if kit is None:
            continue
        keys = [(entry.rsplit("（", 1)[0], fingerprint(kit / entry.rsplit("（", 1)[0]))
                for entry in row.get("不同", []) if entry.endswith("（改了）")]
        for own in ("trick.json", "pairs.json"):
            value = own_json(kit / own)
            keys += [(own, meaning(value))] if value is not None else []
            draft = value.get("draft") if isinstance(value, dict) else None
            keys += [(f"{own} 的草稿", meaning(draft))] if isinstance(draft, str) and draft.strip() else []
        saved = exercise.saved_copy(5, kit / "checks")   # 练习五的存档里有学生自己写的那句指令
        if saved.is_file() and not saved.is_symlink():
            keys.append((saved.relative_to(kit).as_posix(), fingerprint(saved)))
        keys += [(f"{DATA} 里加的记录", text) for text in row.get("自己加的记录", [])]   # 还在资料里的那一条，也比
        for key in keys:
            owners.setdefault(key, []).append(name)
    for (file, _), names in owners.items():
        for name, row in result:
            if name in names and len(names) > 1:
                row["要看"].append(("和别的副本一模一样", f"{file}（{'、'.join(other for other in names if other != name)}）"))


@functools.lru_cache(maxsize=None)   # 老师的课文：全班只读一次
def teacher_lesson_examples():
    return exercise.lesson_examples()


def own_records(documents):
    """资料里学生自己加的记录的正文（去掉标点空白，练习五那句藏着的指令就在这里）：发布版的、照抄课文示范的不算——
    大家照课文贴的示范本来就一样。"""
    shipped = {record["id"] for record in exercise.shipped()}
    examples = teacher_lesson_examples()
    return [retrieval_qa.plain(record["text"]) for record in documents
            if record["id"] not in shipped and retrieval_qa.plain(record["text"]) not in examples]


def own_json(path):
    """学生自己写的 JSON 文件的内容；是链接（符号链接或硬链接）、不是普通文件、读不了的返回 None（链接另有一条：
    “和别的副本是同一个文件”，不再算作“一模一样”）。"""
    if is_linked(path) or not path.is_file():
        return None
    value, problem = exercise.student_json(path)
    return None if problem else value


def meaning(value):
    """一份 JSON 值的意思：按字段名排好、去掉字符串里的空白再取指纹，改个缩进、换个字段顺序还是同一份。"""
    squeezed = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(re.sub(r"\s+", "", squeezed).encode("utf-8")).hexdigest()


def fraction(pair):
    return "—" if not pair or not pair[1] else f"{pair[0]}/{pair[1]}"


def markdown(rows):
    lines = ["列的说明："] + [f"- {text}" for text in LEGEND] + [""]
    header = ["副本", "资料", *[f"练习{n}" for n in exercise.EXERCISES], "recall@3", "精确率", "验收", "和老师的套件不同", "要看一眼"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, row in rows:
        cells = [name, row["资料"], *[row.get("练习", {}).get(n, "") for n in exercise.EXERCISES],
                 evaluate.ratio(row["recall"]) if row.get("recall") else "—",
                 evaluate.ratio(row["precision"]) if row.get("precision") else "—", fraction(row.get("验收")),
                 "、".join(row.get("不同", [])) or "无", looks(row)]
        lines.append("| " + " | ".join(visible(str(cell), 10 ** 6).replace("|", "｜") for cell in cells) + " |")   # 换行、控制字符写出来
    return "\n".join(lines + ["", summary(rows)]) + "\n"


def looks(row):
    """“要看一眼”这一格：同一种原因并成一条，例如“改了 Python 文件：a.py、b.py”；一种原因最多点名 MAX_LISTED 处，
    其余只说个数（副本里带了一整个虚拟环境，一格也不会写上几万字）。"""
    kinds = {}
    for kind, detail in row["要看"]:
        kinds.setdefault(kind, []).extend([detail] if detail else [])
    return "；".join(kind + (f"：{'、'.join(shortened(details))}" if details else "") for kind, details in kinds.items())


def shortened(details):
    """最多 MAX_LISTED 条，多出来的只说个数。"""
    return details if len(details) <= MAX_LISTED else details[:MAX_LISTED] + [f"……另有 {len(details) - MAX_LISTED} 处"]


def summary(rows):
    """一行总结：几个副本，几个要看一眼，按原因数副本。"""
    copies = [row for _, row in rows if row["资料"] != "—"]
    counts = {}
    for row in copies:
        for kind in dict.fromkeys(kind for kind, _ in row["要看"]):
            counts[kind] = counts.get(kind, 0) + 1
    said = "，".join(f"{kind} {count} 个" for kind, count in sorted(counts.items(), key=lambda item: -item[1]))
    flagged = sum(1 for row in copies if row["要看"])
    if sum(counts.values()) > flagged:   # 原因加起来比副本多：说清一个副本可以占几种，免得读成数错了
        said = "按原因数，一个副本可以占几种：" + said
    others = len(rows) - len(copies)
    return (f"总结：{len(copies)} 个副本，{flagged} 个要看一眼" + (f"（{said}）" if said else "")
            + (f"；另有 {others} 个参数没有判（不是套件、找不到、不是作业，或整个文件夹是链接），见最后一列" if others else "") + "。")


def details(rows):
    """--details：每个副本的练习四草稿和它说的错处（trick.json 的 draft 和 why），以及练习五里学生说“这句是指令”的那句
    （instruction），老师一眼看得出它是不是真的错了、真的是指令。副本的名字和表里的一样；算没算分也写上。"""
    lines = ["", "练习四、五学生自己写的（算没算分见表）："]
    for name, row in rows:
        kit = row.get("套件")
        answer, problem = exercise.student_json(kit / "trick.json") if kit else (None, "不是套件")
        credit = "算" if row.get("练习", {}).get(4) else "不算"
        if kit is None:   # 不是套件（文件、命名管道、找不到……）或整个是链接：不打开它，原因见表里这一行
            said = "不看：见表里这一行的说明"
        elif isinstance(answer, dict):
            said = f"草稿「{visible(str(answer.get('draft', '')), 80)}」；说它错在「{visible(str(answer.get('why', '')), 80)}」（练习四：{credit}）"
        else:
            said = "没有 trick.json" if problem and problem.startswith("没有找到") else f"trick.json 读不了（练习四：{credit}）"
        documents = exercise.load(kit / DATA)[0] if kit and (kit / DATA).is_file() and not (kit / DATA).is_symlink() else None
        named = [f"{record['id']}「{visible(str(record['instruction']), 60)}」" for record in documents or []
                 if isinstance(record, dict) and "instruction" in record]
        if named:
            said += f"；练习五说是指令的：{'、'.join(named)}"
        lines.append(f"- {visible(name, 60).replace('|', '｜')}：{said.replace('|', '｜')}")
    return "\n".join(lines) + "\n"


def csv_rows(rows):
    header = ["副本", "资料", *[f"练习{n}" for n in exercise.EXERCISES], "recall@3", "精确率", "验收通过", "验收行数",
              "和老师的套件不同", "要看一眼"]
    body = []
    for name, row in rows:
        share = lambda pair: round(pair[0] / pair[1], 3) if pair and pair[1] else ""   # noqa: E731  数字就是数字
        accepted = row.get("验收") or ("", "")
        body.append([name, row["资料"], *[row.get("练习", {}).get(n, "") for n in exercise.EXERCISES],
                     share(row.get("recall")), share(row.get("precision")), *accepted,
                     "、".join(row.get("不同", [])), looks(row)])
    return [header] + [[visible(cell, 10 ** 6) if isinstance(cell, str) else cell for cell in line] for line in body]


def main(argv):
    options = parse_tool_options(argv, USAGE, __doc__, values=("--out",), flags=("--details",), positionals=1000)
    if not options["args"]:
        print(f"错误：至少要给一个学生的套件文件夹。{USAGE}", file=sys.stderr)
        return 2
    out = options["--out"]
    if options["--details"] and out is not None and out.lower().endswith(".csv"):
        print("错误：--details 写不进 CSV：不加 --out，或者用 --out 成绩.md。", file=sys.stderr)
        return 2
    if out is not None and Path(out).suffix.lower() not in (".csv", ".md"):
        print(f"错误：--out 的文件名要以 .csv 或 .md 结尾（写成哪种格式看后缀），现在是 {out}。", file=sys.stderr)
        return 2
    edited = teacher_edits()
    if edited:   # 比较以老师的工作区为准：老师自己改过又没提交的文件，每个学生都会显得“改了”
        print(f"提醒：老师这份套件有没提交的改动（{'、'.join(edited[:5])}{'……' if len(edited) > 5 else ''}），"
              "学生的文件是和改过的样子比的。", file=sys.stderr)
    rows = rows_for(options["args"])
    if len(rows) < len(options["args"]):   # 作业/李四 和 作业/李四/ 是同一个文件夹：只判一次，说一声，免得老师数行数对不上
        print(f"提醒：有 {len(options['args']) - len(rows)} 个参数和前面的是同一个文件夹（写法不同），只判一次。", file=sys.stderr)
    text = markdown(rows) + (details(rows) if options["--details"] else "")
    if out is None:
        sys.stdout.write(text)
        return 0
    lost = write_out(out, csv_rows(rows), text)
    if lost:   # 写不出去：退出码 5
        return lost
    print(f"已写入 {out}：{len(rows)} 行（每个参数一行）。{summary(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_tool(main))
