"""每个 Markdown 文件都能正常显示：代码块开了就关、表格每行的列数和表头一样、相对链接和锚点都找得到。

课文记录由 transcripts.py 执行核对；这里只看 Markdown 本身的结构（一个没关上的代码块，会把后面的表格整个吞进去）。
"""
import re
import unittest
from pathlib import Path

from kit_helpers import ROOT
from test_lesson_text import slug

FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def markdown_files():
    return sorted(ROOT.glob("*.md")) + sorted((ROOT / "lessons").glob("*.md")) + sorted((ROOT / "checks").glob("*.md"))


def structure_problems(path):
    """一篇 Markdown 的结构问题：[(行号, 说明)]。"""
    problems, opened, table = [], None, None
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    for number, line in enumerate(lines, start=1):
        fence = FENCE.match(line)
        if opened is not None:
            if fence and fence.group(1)[0] == opened[1][0] and len(fence.group(1)) >= len(opened[1]):
                if fence.group(2).strip():   # ```text 关不上代码块（结束行不能带语言名）：多半是上一个块忘了关
                    problems.append((number, f"代码块在第 {opened[0]} 行打开，还没关上，这里又打开了一个"))
                else:
                    opened = None
            continue
        if fence:
            opened, table = (number, fence.group(1)), None
            continue
        if line.startswith("|"):
            cells = len(table_cells(line))
            if table is None:
                table = (number, cells)
            elif cells != table[1]:
                problems.append((number, f"表格这一行有 {cells} 列，表头（第 {table[0]} 行）有 {table[1]} 列"))
        else:
            table = None
    if opened is not None:
        problems.append((opened[0], "代码块打开以后一直没有关上"))
    return problems


def table_cells(line):
    """表格一行的格：行内代码里的 | 和写成 \\| 的 | 不算分隔。"""
    line = re.sub(r"`[^`]*`", lambda m: "x" * len(m.group()), line.replace("\\|", "xx"))
    return line.strip().strip("|").split("|")


def link_problems(path):
    """相对链接：文件要在，#锚点要是那个文件里某个标题的锚点。[(说明)]"""
    problems = []
    text = re.sub(r"(?ms)^\s*(```|~~~).*?^\s*\1\s*$", "", path.read_text(encoding="utf-8-sig"))   # 代码块里的不算链接
    text = re.sub(r"`[^`\n]*`", "", text)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):   # http(s)://、mailto: 这类外部链接不查
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            problems.append(f"链接 {target}：找不到 {file_part}")
        elif anchor and linked.suffix == ".md":
            headings = {slug(line.lstrip("#")) for line in linked.read_text(encoding="utf-8-sig").splitlines()
                        if re.match(r"#{1,6} ", line)}
            if anchor not in headings:
                problems.append(f"链接 {target}：{linked.name} 里没有这个标题")
    return problems


class MarkdownTest(unittest.TestCase):
    def test_every_markdown_file_has_closed_fences_and_even_tables(self):
        for path in markdown_files():
            with self.subTest(file=path.relative_to(ROOT).as_posix()):
                self.assertEqual(structure_problems(path), [])

    def test_every_relative_link_and_anchor_resolves(self):
        for path in markdown_files():
            with self.subTest(file=path.relative_to(ROOT).as_posix()):
                self.assertEqual(link_problems(path), [])

    def test_the_checks_catch_what_they_name(self):
        import tempfile
        with tempfile.TemporaryDirectory() as directory:
            bad = Path(directory) / "bad.md"
            bad.write_text("# 标题\n\n```text\n表一\n```text\n表二\n```\n\n| a | b |\n|---|---|\n| 1 | 2 | 3 |\n"
                           "\n[不在](missing.md) [没这个标题](bad.md#别的) [有](#标题)\n", encoding="utf-8")
            self.assertEqual(structure_problems(bad), [(5, "代码块在第 3 行打开，还没关上，这里又打开了一个"),
                                                      (11, "表格这一行有 3 列，表头（第 9 行）有 2 列")])
            self.assertEqual(link_problems(bad), ["链接 missing.md：找不到 missing.md", "链接 bad.md#别的：bad.md 里没有这个标题"])


if __name__ == "__main__":
    unittest.main()
