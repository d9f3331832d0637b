"""课文读得完：篇幅有上限，开头说学完能做什么，结尾三行小结，术语第一次出现就链接到术语表。

篇幅的量法：课文里代码块（``` 围起来的）和 HTML 注释以外的文字里，有多少个汉字（U+4E00–U+9FFF）。
"""
import re
import subprocess
import tempfile
import unittest

from kit_helpers import KIT_PYTHON, ROOT

LESSONS = sorted((ROOT / "lessons").glob("0[1-7]-*.md"))   # 第 07 课是选读，规矩一样
GLOSSARY = ROOT / "lessons" / "glossary.md"
MAX_HAN_PER_LESSON = 2000       # 第 01–07 课每一课
MAX_HAN_LESSONS_03_TO_05 = 5200   # 第 03、04、05 课加起来
# 必须在术语表里、并在每一课第一次出现时链接过去的词 -> 术语表里的锚点
TERMS = {"NFKC": "nfkc", "二元组": "二元组", "Jaccard": "jaccard-相似度", "recall": "recall-和精确率",
         "精确率": "recall-和精确率", "BM25": "bm25", "token": "token", "JSON 模式": "json-模式", "本机地址": "本机地址",
         "重合度": "重合度", "标注集": "标注集", "混淆矩阵": "混淆矩阵", "提示注入": "提示注入", "零宽字符": "零宽字符",
         "4 字片段": "4-字片段", "出处核对": "出处核对", "关键词路由": "关键词路由", "环境变量": "环境变量",
         "退出码": "退出码", "基线": "基线", "留出集": "留出集"}
LINK = re.compile(r"\[([^\]]*)\]\((?:lessons/)?glossary\.md#([^)\s]+)\)")   # 课文里写 glossary.md，README 里写 lessons/glossary.md


def prose(text):
    """代码块、HTML 注释换成等长的空白（位置不变），其余原样返回。"""
    text = re.sub(r"<!--.*?-->", lambda m: re.sub(r"\S", " ", m.group()), text, flags=re.S)
    lines, fence = [], None
    for line in text.split("\n"):
        opening = re.match(r"^\s*(`{3,})", line)
        if fence is None and opening:
            fence = opening.group(1)
            lines.append(" " * len(line))
        elif fence is not None:
            if line.strip() == fence or (line.strip().startswith(fence) and not line.strip().strip("`")):
                fence = None
            lines.append(" " * len(line))
        else:
            lines.append(line)
    return "\n".join(lines)


def han_count(text):
    return len(re.findall(r"[\u4e00-\u9fff]", prose(text)))


def slug(heading):
    """GitHub 给标题生成锚点的规则：小写，去掉标点（保留字母、数字、汉字、-、_），空格换成 -。"""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def first_use(text, word):
    """word 在正文里（不算代码块、注释、标题行、行内代码）第一次出现的位置，没有就是 None。"""
    body = prose(text)
    body = re.sub(r"`[^`\n]*`", lambda m: " " * len(m.group()), body)
    body = re.sub(r"(?m)^#.*$", lambda m: " " * len(m.group()), body)
    pattern = re.escape(word)
    if word.isascii():
        pattern = rf"(?<![A-Za-z_@]){pattern}(?![A-Za-z_])"
    found = re.search(pattern, body)
    return found.start() if found else None


def sections(text):
    """[(标题, 正文行)]，只看 ## 二级标题。"""
    parts, title, body = [], None, []
    for line in prose(text).split("\n"):
        if line.startswith("## "):
            if title is not None:
                parts.append((title, body))
            title, body = line[3:].strip(), []
        elif title is not None:
            body.append(line)
    if title is not None:
        parts.append((title, body))
    return parts


class LengthTest(unittest.TestCase):
    def test_each_lesson_is_at_most_2000_han_characters_of_prose(self):
        self.assertEqual(len(LESSONS), 7)
        sizes = {path.name: han_count(path.read_text(encoding="utf-8-sig")) for path in LESSONS}
        self.assertEqual({name: size for name, size in sizes.items() if size > MAX_HAN_PER_LESSON}, {}, sizes)

    def test_lessons_03_to_05_together_are_at_most_5200(self):
        total = sum(han_count(path.read_text(encoding="utf-8-sig")) for path in LESSONS if path.name[:2] in ("03", "04", "05"))
        self.assertLessEqual(total, MAX_HAN_LESSONS_03_TO_05)

    def test_the_count_ignores_code_and_comments(self):
        text = "# 题\n\n正文四字\n\n```console\n$ python 代码里的字\n输出里的字\n```\n<!-- 注释里的字 -->\n"
        self.assertEqual(han_count(text), 5)


class WrongFolderTest(unittest.TestCase):
    def test_lesson_01_quotes_what_python_really_says_for_a_missing_script(self):
        # 第 01 课说在 lessons/ 里运行会看到 Python 的英文报错（新手试读：第一个撞上的就是它）；
        # 引的那两段必须是这个 Python 真会打印的
        with tempfile.TemporaryDirectory() as directory:
            done = subprocess.run(KIT_PYTHON + ["reply_assistant.py"], cwd=directory, capture_output=True, text=True)
        lesson = (ROOT / "lessons" / "01-reply-assistant.md").read_text(encoding="utf-8")
        for quoted in ("can't open file", "[Errno 2] No such file or directory"):
            with self.subTest(quoted=quoted):
                self.assertIn(quoted, done.stderr)
                self.assertIn(quoted, lesson)


class TraceTimingTest(unittest.TestCase):
    def test_a_lesson_that_shows_trace_timings_says_they_vary(self):
        # 课文检查不比 trace 的毫秒数；学生却会逐行对照。课文不说的话，学生会以为自己的输出不对（新手试读）
        showing = [path for path in LESSONS if re.search(r"^\[trace\] .* \d+(\.\d+)? ms", path.read_text(encoding="utf-8-sig"), re.M)]
        self.assertGreaterEqual(len(showing), 2)   # 第 05、07 课都有
        for path in showing:
            with self.subTest(lesson=path.name):
                self.assertRegex(prose(path.read_text(encoding="utf-8-sig")), r"耗时每次不同")


class ShapeTest(unittest.TestCase):
    def test_each_lesson_opens_with_what_you_will_be_able_to_do(self):
        for path in LESSONS:
            lines = [line for line in path.read_text(encoding="utf-8-sig").split("\n") if line.strip()]
            with self.subTest(lesson=path.name):
                self.assertTrue(lines[0].startswith("# 第 "), lines[0])
                self.assertEqual(lines[1], "学完这一课，你能：")
                self.assertTrue(lines[2].startswith("- "), lines[2])

    def test_each_lesson_ends_with_a_three_line_recap(self):
        for path in LESSONS:
            text = path.read_text(encoding="utf-8-sig")
            title, body = sections(text)[-1]
            bullets = [line for line in body if line.startswith("- ")]
            rest = [line for line in body if line.strip() and not line.startswith("- ")]
            with self.subTest(lesson=path.name):
                self.assertEqual(title, "小结")
                self.assertEqual(len(bullets), 3, bullets)
                self.assertTrue(all(line.startswith("下一课：") for line in rest), rest)
                self.assertLessEqual(len(rest), 1)


class MarkerTest(unittest.TestCase):
    def test_every_marked_code_block_is_one_the_lesson_runner_checks(self):
        # 写错了的标记（```python3 from=…）不会报错，只是那段代码再也没人核对：每个带“名字=值”的代码块都要认得出来
        import transcripts
        for path in LESSONS + [ROOT / "README.md"]:
            for number, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
                fence = re.match(r"^```(\w+)\s+(.*=.*)$", line)
                if fence:
                    with self.subTest(file=path.name, line=number):
                        self.assertIsNotNone(transcripts.block_kind(fence.group(1), fence.group(2))[0], line)


class GlossaryTest(unittest.TestCase):
    def anchors(self):
        return {slug(line[3:]) for line in GLOSSARY.read_text(encoding="utf-8-sig").split("\n") if line.startswith("## ")}

    def test_the_glossary_defines_every_required_term(self):
        self.assertLessEqual(set(TERMS.values()), self.anchors())

    def test_every_glossary_link_points_to_a_real_entry(self):
        anchors = self.anchors()
        for path in LESSONS + [ROOT / "README.md"]:
            with self.subTest(file=path.name):
                bad = [target for _, target in LINK.findall(path.read_text(encoding="utf-8-sig")) if target not in anchors]
                self.assertEqual(bad, [])

    def test_a_term_is_linked_to_the_glossary_where_a_lesson_first_uses_it(self):
        for path in LESSONS + [ROOT / "README.md"]:
            text = path.read_text(encoding="utf-8-sig")
            links = [(m.start(), m.end(), m.group(2)) for m in LINK.finditer(text)]
            for word, anchor in TERMS.items():
                at = first_use(text, word)
                if at is None:
                    continue
                with self.subTest(lesson=path.name, term=word):
                    line = text.count("\n", 0, at) + 1
                    self.assertTrue(any(start <= at < end and target == anchor for start, end, target in links),
                                    f"第 {line} 行第一次用到“{word}”，没有链接到 glossary.md#{anchor}")

    def test_the_rule_sees_an_unlinked_first_use(self):
        # 防止检查空转：没链接的第一次使用必须被找出来，代码里的不算
        text = "# 课\n\n`token` 在代码里。这里的 token 没有链接。后来 [token](glossary.md#token)。\n"
        at = first_use(text, "token")
        self.assertEqual(text[at:at + 9], "token 没有链接"[:9])
        self.assertFalse(any(m.start() <= at < m.end() for m in LINK.finditer(text)))


if __name__ == "__main__":
    unittest.main()
