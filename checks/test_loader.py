"""资料文件的读取规则：每条规则一个检查，几种常见错误的提示逐字固定。"""
import json
import os
import tempfile
import unittest
from unittest import mock

from kit_helpers import (ROOT, SHIPPED_DOCUMENTS, assert_same_in_a_process, documents_state, in_ci, needs_shipped_documents,
                         run_kit, student_documents, write_temp)

import retrieval_qa
from model_reply_assistant import KitError
from retrieval_qa import load_documents

GOOD = {"id": "A1", "title": "标题", "text": "正文", "keywords": ["试用"]}


def records_text(*records):
    return json.dumps(list(records), ensure_ascii=False)


class LoaderCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.dir = self._tmp.name

    def path(self, name, content):
        return str(write_temp(self.dir, name, content))

    def error_for(self, content, name="bad.json"):
        """加载这段内容，必须以 KitError 结束；返回去掉文件路径后的报错。"""
        path = self.path(name, content)
        with self.assertRaises(KitError) as caught:
            load_documents(path)
        self.assertEqual(caught.exception.exit_code, 2)
        message = str(caught.exception)
        prefix = f"错误：资料文件 {path}"
        self.assertTrue(message.startswith(prefix), message)
        self.assertNotIn("\n", message)
        return message[len(prefix):]


@needs_shipped_documents
class SampleFileTest(LoaderCase):
    def test_sample_file_has_five_valid_records(self):
        records = load_documents(str(student_documents()))
        self.assertEqual([r["id"] for r in records], ["D01#1", "D01#2", "D02#1", "D03#1", "D04#1"])

    def test_trial_is_seven_days_written_as_a_digit(self):
        trial = load_documents(str(student_documents()))[0]
        self.assertIn("7 天", trial["text"])
        self.assertNotIn("免费用多久", trial["keywords"])   # 练习一要学生自己加



class KitDocumentsTest(LoaderCase):
    """这几项总会运行，学生改过的副本也一样。"""

    def test_default_path_is_next_to_the_script_not_the_cwd(self):
        self.assertEqual(retrieval_qa.DOCUMENTS_PATH, str(ROOT / "retrieval_documents.json"))

    def test_kit_documents_file_is_valid(self):
        try:
            self.assertGreaterEqual(len(load_documents(str(student_documents()))), 1)
        except KitError as error:   # 失败时只给程序自己的那句话：文件、行、列、提示
            self.fail(str(error))

    def test_shipped_documents_are_unchanged(self):
        state = documents_state()
        if state is not None and not in_ci():
            self.skipTest(f"{student_documents().name} 和发布版不同（{state}）")
        self.assertIsNone(state, "仓库里的资料文件必须和 checks/shipped_documents.json 相同")

    def test_the_shipped_copy_is_valid_and_warning_free(self):
        documents = load_documents(str(SHIPPED_DOCUMENTS))
        self.assertEqual((len(documents), retrieval_qa.document_warnings(documents)), (5, []))


class EncodingTest(LoaderCase):
    def test_bom_from_windows_notepad_is_accepted(self):
        path = self.path("bom.json", b"\xef\xbb\xbf" + records_text(GOOD).encode("utf-8"))
        self.assertEqual(load_documents(path)[0]["id"], "A1")

    def test_gbk_file_names_the_encoding(self):
        content = records_text(GOOD).encode("gbk")
        self.assertEqual(self.error_for(content),
                         "：不是 UTF-8 编码（第 1 行有无法解码的字节 0xB1，可能是用 GBK/ANSI 保存的），请在编辑器里选择“UTF-8”重新保存。")

    def test_utf16_file_is_named(self):
        content = records_text(GOOD).encode("utf-16")
        self.assertEqual(self.error_for(content), "：是 UTF-16 或 UTF-32 编码（记事本里叫“Unicode”），请在编辑器里选择“UTF-8”重新保存。")

    def test_empty_and_blank_files(self):
        expected = "：是空的：还没有写内容，或保存时没存上。"
        self.assertEqual(self.error_for(""), expected)
        self.assertEqual(self.error_for(" \n\t\r\n"), expected)


class SizeAndCountTest(LoaderCase):
    def test_file_at_the_limit_loads_and_one_byte_more_does_not(self):
        body = records_text(GOOD)
        at_limit = body + " " * (100 * 1024 - len(body.encode("utf-8")))
        self.assertEqual(len(load_documents(self.path("ok.json", at_limit))), 1)
        message = self.error_for(at_limit + " ")
        self.assertEqual(message, "：超过了 102400 字节（100 KB）的上限。提示：资料应当是人工切分的短片段。")

    def test_between_one_and_one_hundred_records(self):
        many = [dict(GOOD, id=f"R{n:03d}") for n in range(101)]
        self.assertEqual(len(load_documents(self.path("100.json", records_text(*many[:100])))), 100)
        self.assertEqual(self.error_for(records_text(*many)), "：应当有 1–100 条记录，实际有 101 条。")
        self.assertEqual(self.error_for("[]"), "：应当有 1–100 条记录，实际有 0 条。")

    def test_top_level_must_be_an_array(self):
        self.assertEqual(self.error_for(json.dumps(GOOD)), "：最外层应当是 JSON 数组 [ … ]，实际是对象 {…}。")


class SyntaxHintTest(LoaderCase):
    """语法错误：行、列，加上学生最常见失误的提示。列从 1 数起，按字符（不是字节）计。"""

    def test_trailing_comma_points_at_the_comma(self):
        content = '[\n  {"id": "A1"},\n]\n'
        self.assertEqual(self.error_for(content),
                         " 第 2 行第 15 列：JSON 格式不对，这里多了一个逗号。"
                         "提示：数组或对象的最后一项后面不能再写逗号，删掉它。")

    def test_trailing_comma_inside_an_object(self):
        content = '[{"id": "A1",}]'
        self.assertIn(" 第 1 行第 13 列：JSON 格式不对，这里多了一个逗号。", self.error_for(content))

    def test_missing_comma_between_records(self):
        content = '[\n  {"id": "A1"}\n  {"id": "A2"}\n]\n'
        self.assertEqual(self.error_for(content),
                         " 第 3 行第 3 列：JSON 格式不对，这里应当是逗号「,」。提示：上一项的末尾可能漏了逗号「,」。")

    def test_a_missing_or_extra_closing_bracket_is_named_from_the_brackets_still_open(self):
        # 两种都不说“上一项的末尾可能漏了逗号”：照着补了逗号又说“多了一个逗号”，学生来回打转；括号是开是关，数一数就知道
        read_through = "（试过了：这样改完，整个文件就能读通）"
        missing = '[\n  {"id": "A1", "keywords": ["试用", "几天"\n  },\n  {"id": "A2"}\n]\n'
        self.assertEqual(self.error_for(missing), " 第 3 行第 3 列：JSON 格式不对，这里之前少了「]」。"
                                                   f"提示：第 2 行第 28 列的「[」还没有关上，就先写了「}}」：在它前面补上「]」{read_through}。")
        extra = '[\n  {"id": "A1", "keywords": ["试用"]}},\n  {"id": "A2"}\n]\n'
        self.assertEqual(self.error_for(extra), f" 第 2 行第 35 列：JSON 格式不对，这里多了一个「}}」。提示：删掉它{read_through}。")
        quoted = '[{"id": "A]}", "keywords": ["试用"\n}]'   # 字符串里的括号不算
        self.assertIn("这里之前少了「]」。提示：第 1 行第 28 列的「[」还没有关上", self.error_for(quoted))
        # 学生做练习一时真写出来的两种（新手试读）：多敲一个「]」，不说“少了「}」”（照着补了又报“多余的文字”）；
        # 「]」敲成「}」，不说“补上「]」”（补了又说后面的「}」多余）。三种改法在文件上各试一遍，说那个真能读通的
        twice = '[\n  {"id": "A1", "keywords": ["试用", "免费用多久"]],\n  "title": "t"},\n  {"id": "A2"}\n]\n'
        self.assertEqual(self.error_for(twice), f" 第 2 行第 43 列：JSON 格式不对，这里多了一个「]」。提示：删掉它{read_through}。")
        swapped = '[\n  {"id": "A1", "keywords": ["试用", "免费用多久"},\n  "title": "t"},\n  {"id": "A2"}\n]\n'
        self.assertEqual(self.error_for(swapped), " 第 2 行第 42 列：JSON 格式不对，这里应当是「]」，写成了「}」。"
                                                  f"提示：它要关上第 2 行第 28 列的「[」：把「}}」换成「]」{read_through}。")
        for text in (missing, extra, twice, swapped):   # 后面还有别的错：哪种改法都读不通，就不许说“能读通”
            with self.subTest(text=text):
                self.assertNotIn("试过了", self.error_for(text + "x"))
        # 后面还有 parse_json 才拒绝的毛病（5000 位的整数、NaN）：试改法时不能冒出 traceback，也不能说“改完就能读通”（审阅时发现）
        from model_reply_assistant import JsonProblem, parse_json
        for tail in ("1" * 5000, "NaN"):
            with self.subTest(tail=tail[:5]), self.assertRaises(JsonProblem) as caught:
                parse_json('{"sources": ["D01"}, "n": ' + tail + "}")
            self.assertEqual((caught.exception.what, caught.exception.hint),
                             ("这里应当是「]」，写成了「}」", "它要关上第 1 行第 13 列的「[」：把「}」换成「]」"))

    def test_what_a_chinese_input_method_types_is_named(self):
        # 新手试读：拼音输入法里 [ ] \ 是【】、，引号是「」＂‘’，还有看不见的全角空格；不能只说“这里缺少一个值”，
        # ‘’ 也不能指点成单引号「'」（照做了又说不能用单引号）
        record = '[{"id": "A1", "title": "t", "text": "x", "keywords": %s}]'
        for typed, char, plain in (('【"试用"]', "【", "["), ('["试用"】', "】", "]"), ('["试用"、"几天"]', "、", ","),
                                   ('[＂试用＂]', "＂", '"'), ("[‘试用’]", "‘", '"'), ('["试用",「几天」]', "「", '"')):
            with self.subTest(typed=typed):
                self.assertIn(f"提示：这里是全角字符「{char}」，JSON 的标点要用半角的「{plain}」", self.error_for(record % typed))
        for typed, name, code in (('["试用",\u3000"几天"]', "全角空格", "3000"), ('["试用",\u00a0"几天"]', "不换行空格", "00a0")):
            with self.subTest(name=name):
                self.assertIn(f"提示：这里有一个看不见的{name}（\\u{code}），JSON 只认半角空格", self.error_for(record % typed))
        self.assertIn("提示：字符串和字段名都要用双引号「\"」括起来：这里的文字前面少了「\"」", self.error_for(record % '["试用", 几天"]'))
        # 审阅时发现：Python 写法的 True/None 不是少了引号；正文里的「设置」‘自动续费’是正常的中文标点，不是敲错的引号
        self.assertIn("提示：JSON 里只有小写的 true、false、null", self.error_for(record % "True"))
        missing_comma = '[{"id": "A1", "title": "会员"\n  "text": "在「设置」里打开‘自动续费’即可。", "keywords": ["k"]}]'
        self.assertIn("提示：上一项的末尾可能漏了逗号「,」", self.error_for(missing_comma))
        self.assertIn("提示：第 1 行第 21 列的「」」要写成半角的「\"」（试过了：这样改完，整个文件就能读通）",
                      self.error_for('[{"id": "A1", "title」: "t", "text": "x", "keywords": ["k"]}]'))
        # 第三轮审阅：只看 json 出错前读的那个字符串；中文引号后面跟着中文逗号是正常的，不算
        from model_reply_assistant import JsonProblem, parse_json
        for answer, hint in (('{"status": "draft", "draft": "试用期是“7 天”，到期后可以升级。" "sources": ["D01#1"]}',
                              "上一项的末尾可能漏了逗号「,」"),   # 少了逗号，不是引号的错
                             ('{"status": "draft", "draft": "试用 7 天。", "sources": ["D01#1”]}\n',   # 文件末尾有换行：
                              "第 1 行第 59 列的「”」要写成半角的「\"」")):   # 不说“意外结束”：那样学生补了括号还是一样
            with self.subTest(answer=answer[-20:]), self.assertRaises(JsonProblem) as caught:
                parse_json(answer)
            self.assertIn(hint, caught.exception.hint)

    def test_a_string_that_ended_in_the_wrong_place_is_named(self):
        # 第四轮审阅：只在 json 读的那个字符串结束得不对时怪它里面的全角引号（结尾的引号、”， ”：都是输入法打的）；
        # 字符串本来就结束得对（"试用期“7 天”" 后面少了逗号）就说逗号；反斜杠把结尾的引号转义掉了，说反斜杠
        from model_reply_assistant import JsonProblem, parse_json
        quote = "要写成半角的「\"」（试过了：这样改完，整个文件就能读通）"
        for text, hint in (('{"status": "draft", "draft": "x", "sources": ["D01#1”]}', quote),   # 文件末尾没有换行
                           ('[{"id": "A", "keywords": ["试用”，"几天"]}]', "的「”，」要写成半角的「\",」" + "（试过了：这样改完，整个文件就能读通）"),
                           ('{"status": "draft", "draft”：  "试用 7 天。", "sources": ["D01#1"]}', "的「”：」要写成半角的「\":」"),
                           ('[{"id": "A",\n "text": "试用期“7 天”"\n "keywords": ["k"]}]', "上一项的末尾可能漏了逗号「,」"),
                           ('{"status": "draft", "draft": "路径是 C:\\", "sources": ["D01#1"]}',
                            "的「\\\"」是一个普通的引号，字符串没有在那里结束：要写反斜杠本身，请写成「\\\\」"),
                           ('[{"id": "A"}]\n\u3000\n', "这里有一个看不见的全角空格（\\u3000）"),   # 不是“意外结束”
                           # 第五轮审阅：改法都在文件上试过才说——字段名后面跟着 [、一起敲出来的 ”、 和 ”: “、
                           # 正文里配对的中文引号后面漏了结尾的 "（补上，不是换掉）；试不通的不猜
                           ('[{"id": "A", "keywords”: ["试用", "几天"]}]', "第 1 行第 23 列的「”」要写成半角的「\"」" + "（试过了：这样改完，整个文件就能读通）"),
                           ('[{"id": "A", "keywords": ["试用”、"体验版"]}]', "的「”、」要写成半角的「\",」"),
                           ('[{"id": "A", "title”: “产品规则", "keywords": ["k"]}]', "的「”: “」要写成半角的「\": \"」"),
                           ('[{"id": "A", "text": "点击“开始试用”,\n "keywords": ["k"]}]',
                            "字符串没有结束：第 1 行第 30 列的「”」是正文里的引号，在它后面补上半角的「\"」" + "（试过了：这样改完，整个文件就能读通）"),
                           ('[{"id": "A", "text": "在“设置”\n里打开。", "keywords": ["k"]}]', "正文里要换行请写 \\n"),
                           ('[{"id": "A", "text": "点\\"设置\\"即可。,\n "keywords": ["k"]}]', "检查字符串结尾是否漏了双引号"),
                           ('[{"id": "A", "keywords": ["试用", "“几天”"}]', "在它前面补上「]」"),
                           # 第六轮审阅：整个键值都是中文输入法打的（两处一起改）；正文以“开头的值，不能被说成“全角字符”；
                           # 左右引号已经配好对的，最后那个 ” 才是敲错的结尾引号
                           ('{"status”：“draft”, "draft": "试用 7 天。", "sources": ["D01#1"]}',
                            "第 1 行第 9 列的「”：“」要写成半角的「\":\"」；第 1 行第 17 列的「”」要写成半角的「\"」" + "（试过了：这样改完，整个文件就能读通）"),
                           ('[{"id": "A", "text”: "“设置”里打开", "keywords": ["k"]}]', "第 1 行第 19 列的「”」要写成半角的「\"」"),
                           ('[{"id": "A", "text": "在“设置”里开通。”,\n "keywords": ["k"]}]', "第 1 行第 32 列的「”」要写成半角的「\"」")):
            with self.subTest(text=text), self.assertRaises(JsonProblem) as caught:
                parse_json(text)
            self.assertIn(hint, caught.exception.hint or "")
            if "要写成半角" not in hint:
                self.assertNotIn("要写成半角", caught.exception.hint)

    def test_a_quote_repair_is_offered_even_when_the_file_has_another_mistake(self):
        # 第六轮审阅：文件里另有一处错时，整个文件读不通，引号的提示也照样给：读过了下一行就说，但不说“能读通”
        broken = ('[\n  {"id": "A1", "title”: "t", "keywords": ["k"]},\n  {"id": "A2", "title": "t",\n'
                  '   "keywords": ["k",]}\n]\n')
        message = self.error_for(broken)
        self.assertIn("第 2 行第 22 列的「”」要写成半角的「\"」（试过了：这样改完，这里就读得过去了，后面还有别的错）", message)
        big = json.dumps([{"id": f"X{n}", "title": f"标题{n}", "text": "在“设置”里“打开”", "keywords": ["k"]} for n in range(500)],
                         ensure_ascii=False).replace('"title": "标题5"', '"title”: "标题5"', 1)   # 一行写完的大文件：从出错处找起
        self.assertIn("的「”」要写成半角的「\"」（试过了：这样改完，整个文件就能读通）", self.error_for(big))
        # 第七轮审阅：一行写完、两处错；一行里两处错；关键词整个是中文输入法打的（先试全换掉的那一种，不把三个词并成一个）
        records = [{"id": "A1", "title": "t", "text": "x", "keywords": ["k"]}, {"id": "A2", "title": "t", "text": "x", "keywords": ["k"]}]
        one_line = json.dumps(records, ensure_ascii=False).replace('"title"', '"title”', 1).replace('"A2"', '"A2”', 1)
        self.assertIn("第 1 行第 21 列的「”」要写成半角的「\"」（试过了：这样改完，这里就读得过去了，后面还有别的错）",
                      self.error_for(one_line))
        two_on_a_line = '[\n  {"id": "A1", "title”: "产品规则 · 试用"，\n   "text": "x", "keywords": ["k"]}\n]\n'
        self.assertIn("第 2 行第 22 列的「”」要写成半角的「\"」（试过了：这样改完，这里就读得过去了，后面还有别的错）",
                      self.error_for(two_on_a_line))
        # 第八轮审阅（模糊测试）：正文里有转义的 \"，找字符串开头时不能停在它上面，不然配好对的 ” 会被说成敲错的引号
        from model_reply_assistant import JsonProblem, parse_json
        with self.assertRaises(JsonProblem) as caught:
            parse_json('{"draft": "他说“好\\"的”, "sources": ["D01#1"]}')
        self.assertIn("第 1 行第 19 列的「”」是正文里的引号，在它后面补上半角的「\"」", caught.exception.hint)
        typed = '[{"id": "A1", "title": "t", "text": "x", "keywords": ["试用”，“体验版”，“几天”]}]'
        self.assertIn("的「”，“」要写成半角的「\",\"」；", self.error_for(typed))
        # 一起换的只是敲错的那几处：正文里配好对的“设置”的 ” 不换，不然两个关键词又并成一个
        mixed = '[{"id": "A1", "title": "t", "text": "x", "keywords": ["在“设置”里”，“几天”]}]'
        self.assertIn("第 1 行第 62 列的「”，“」要写成半角的「\",\"」；第 1 行第 67 列的「”」要写成半角的「\"」（试过了",   # 第 60 列的不换
                      self.error_for(mixed))

    def test_a_record_or_the_file_that_lost_its_opening_bracket(self):
        # 练习三删记录时多删了一点（新手试读）：下一条的「{」、或文件开头的「[」跟着删掉了；不能说“可能少了逗号”或没有提示
        lost_brace = '[\n  {"id": "A1", "keywords": ["k"]},\n  "id": "A2", "keywords": ["k"]}\n]\n'
        self.assertEqual(self.error_for(lost_brace), " 第 3 行第 7 列：JSON 格式不对，这里在数组「[」里，却写了「字段名: 值」。"
                                                     "提示：这条记录开头的「{」可能删掉了：补上它。")
        lost_bracket = '{"id": "A1", "keywords": ["k"]},\n{"id": "A2", "keywords": ["k"]}\n]\n'
        self.assertIn("提示：最外层只能有一个值：资料文件是一个数组 [ {…}, {…} ]，开头的「[」可能删掉了", self.error_for(lost_bracket))
        # 审阅时发现：开头的「[」还在时不能这样说——末尾多一个逗号，或中间多写了一个「]」
        trailing = '[\n  {"id": "A1", "keywords": ["k"]}\n],\n'
        self.assertIn("提示：最外层的值后面多了一个逗号：删掉它。", self.error_for(trailing))
        closed_early = '[\n  {"id": "A1", "keywords": ["k"]}\n],\n  {"id": "A2", "keywords": ["k"]}\n]\n'
        self.assertIn("提示：最外层的数组在这里之前就关上了：前面可能多写了一个「]」。", self.error_for(closed_early))

    def test_a_second_bom_is_named_in_chinese(self):
        # 存了两次 BOM：读的时候去掉一个，剩下的不能原样报出 json 的英文“Unexpected UTF-8 BOM”
        self.assertEqual(self.error_for("\ufeff\ufeff" + json.dumps([GOOD])),
                         "：开头存了两个看不见的 BOM（\\ufeff），请在编辑器里另存为“UTF-8”（不带 BOM）。")

    def test_full_width_comma_is_named_and_shown(self):
        content = '[{"id": "A1"，"title": "标题"}]'
        self.assertEqual(self.error_for(content),
                         " 第 1 行第 13 列：JSON 格式不对，这里应当是逗号「,」。"
                         "提示：这里是全角字符「，」，JSON 的标点要用半角的「,」（切换到英文输入法再输入）。")

    def test_a_full_width_closing_quote_is_named_in_documents_and_saved_answers(self):
        # "title”: 的全角引号被当成字符串的一部分，错误报在后面；不能只说“这里应当是冒号”
        hint = "的「”」要写成半角的「\"」（试过了：这样改完，整个文件就能读通）"
        self.assertIn(hint, self.error_for('[{"id": "A", "title”: "t", "text": "x", "keywords": ["k"]}]'))
        from model_reply_assistant import JsonProblem, parse_json
        with self.assertRaises(JsonProblem) as caught:
            parse_json('{"status": "draft", "draft”: "试用 7 天。", "sources": ["D01#1"]}')
        self.assertTrue(caught.exception.hint.endswith(hint), caught.exception.hint)

    def test_full_width_colon_and_quote(self):
        self.assertIn("全角字符「：」", self.error_for('[{"id"："A1"}]'))
        self.assertIn("全角字符「“」", self.error_for('[{“id”: "A1"}]'))

    def test_full_width_closing_quote_inside_a_string(self):
        content = '[{"id": "A1",\n  "title": "标题”,\n  "text": "x"}]'
        message = self.error_for(content)
        self.assertIn(" 第 2 行", message)
        self.assertIn("第 2 行第 15 列的「”」要写成半角的「\"」（试过了：这样改完，整个文件就能读通）", message)

    def test_single_quotes(self):
        self.assertEqual(self.error_for("[{'id': 'A1'}]"),
                         " 第 1 行第 3 列：JSON 格式不对，这里应当是用双引号括起来的字段名。"
                         "提示：JSON 的字段名和字符串要用双引号「\"」，不能用单引号「'」。")

    def test_comment(self):
        content = '[\n  // 试用规则\n  {"id": "A1"}\n]'
        self.assertEqual(self.error_for(content),
                         " 第 2 行第 3 列：JSON 格式不对，这里缺少一个值。"
                         "提示：JSON 不支持注释（// 、/* */ 或 #），请删掉注释。")

    def test_file_ending_early(self):
        self.assertEqual(self.error_for('[{"id": "A1"}, '),
                         " 第 1 行第 15 列：JSON 格式不对，文件在这里意外结束。提示：可能少了结尾的「]」或「}」。")
        # 少了最后的 ]：指向最后一个字符之后，而不是文件末尾的空行；也不要误导学生去加逗号
        self.assertEqual(self.error_for('[\n  {"id": "A1"}\n\n'),
                         " 第 2 行第 15 列：JSON 格式不对，文件在这里意外结束。提示：可能少了结尾的「]」或「}」。")

    def test_doubled_or_leading_comma(self):
        expected = "JSON 格式不对，这里多了一个逗号。提示：两项之间只要一个逗号，数组开头也不能有逗号，删掉它。"
        self.assertEqual(self.error_for('[{"id": "A1"},,{"id": "A2"}]'), " 第 1 行第 15 列：" + expected)
        self.assertEqual(self.error_for('[\n  ,{"id": "A1"}]'), " 第 2 行第 3 列：" + expected)

    def test_unescaped_double_quote_inside_text(self):
        self.assertEqual(self.error_for('[{"text": "试用期 "7" 天"}]'),
                         ' 第 1 行第 17 列：JSON 格式不对，这里应当是逗号「,」。提示：可能是上一项少了逗号「,」；'
                         '如果是正文里写了英文双引号，请写成 \\" 或换成中文引号“”。')

    def test_a_record_deleted_only_halfway(self):
        # 练习三删 D01#1 时只删了开头几行，留下它的「},」：第 2 行第 3 列是多出来的「}」
        self.assertEqual(self.error_for('[\n  },\n  {"id": "A2"}\n]'),
                         " 第 2 行第 3 列：JSON 格式不对，这里多了一个「}」。"
                         "提示：删一条记录时可能只删了一半：把它从「{」到「},」整段删掉，或补回它的开头。")
        # 字段的值空着（"title": }）不是删了半条记录：照旧只说缺一个值
        self.assertEqual(self.error_for('[{"id": "A1", "title": }]'), " 第 1 行第 24 列：JSON 格式不对，这里缺少一个值。")

    def test_missing_closing_brace_of_a_record(self):
        self.assertIn("上一条记录可能少了结尾的「}」", self.error_for('[{"id": "A1",\n  {"id": "A2"}]'))


class SchemaTest(LoaderCase):
    """结构错误：第几条记录、它的 id、哪个字段、应当是什么、实际是什么。"""

    def check(self, record, expected, position=2):
        records = [GOOD, record] if position == 2 else [record]
        self.assertEqual(self.error_for(records_text(*records)), "：" + expected)

    def test_record_must_be_an_object(self):
        self.check(["A2"], "第 2 条记录应当是对象 {id, title, text, keywords}，实际是数组（1 项）。")

    def test_misspelt_keywords_field_is_suggested(self):
        record = {"id": "A2", "title": "t", "text": "x", "keyword": ["试用"]}
        self.check(record, '第 2 条记录（id "A2"）缺少字段 keywords（有一个 keyword，是不是想写 keywords？）。')

    def test_missing_field_without_a_near_name(self):
        self.check({"id": "A2", "text": "x", "keywords": ["k"]}, '第 2 条记录（id "A2"）缺少字段 title。')

    def test_id_must_be_a_non_empty_string(self):
        self.check(dict(GOOD, id=7), "第 2 条记录的 id 应当是非空字符串，实际是数字 7。")
        self.check(dict(GOOD, id=""), "第 2 条记录的 id 应当是非空字符串，实际是空字符串。")

    def test_blank_text_is_rejected(self):
        self.check(dict(GOOD, id="A2", text="  \n "), '第 2 条记录（id "A2"）的 text 应当是非空字符串，实际是只有空白的字符串。')

    def test_title_null(self):
        self.check(dict(GOOD, id="A2", title=None), '第 2 条记录（id "A2"）的 title 应当是非空字符串，实际是null。')

    def test_keywords_written_as_a_string(self):
        self.check(dict(GOOD, id="A2", keywords="部署"),
                   '第 2 条记录（id "A2"）的 keywords 应当是非空的字符串数组，实际是字符串 "部署"。提示：写成 ["部署"]。')
        self.check(dict(GOOD, id="A2", keywords="部署，服务器, 内存"),
                   '第 2 条记录（id "A2"）的 keywords 应当是非空的字符串数组，实际是字符串 "部署，服务器, 内存"。'
                   '提示：写成 ["部署", "服务器", "内存"]。')

    def test_keywords_empty_list_and_bad_items(self):
        self.check(dict(GOOD, id="A2", keywords=[]),
                   '第 2 条记录（id "A2"）的 keywords 应当是非空的字符串数组，实际是数组（0 项）。')
        self.check(dict(GOOD, id="A2", keywords=["部署", 3]),
                   '第 2 条记录（id "A2"）的 keywords 第 2 项应当是非空字符串，实际是数字 3。')
        self.check(dict(GOOD, id="A2", keywords=["部署", " "]),
                   '第 2 条记录（id "A2"）的 keywords 第 2 项应当是非空字符串，实际是只有空白的字符串。')

    def test_duplicate_id(self):
        self.check(dict(GOOD, title="另一条"), '第 2 条记录（id "A1"）的 id 和第 1 条重复。提示：每条记录的 id 必须唯一。')

    def test_nan_and_infinity_are_not_json(self):
        content = '[{"id": "A1", "title": NaN, "text": "x", "keywords": ["k"]}]'
        self.assertEqual(self.error_for(content),
                         '：第 1 项的 title 是 NaN，JSON 不允许 NaN 和 Infinity。')
        content = '[{"id": "A1", "title": "t", "text": "x", "keywords": ["k"], "note": [[-Infinity]]}]'
        self.assertEqual(self.error_for(content),
                         '：第 1 项的 note 第 1 项 第 1 项是 -Infinity，JSON 不允许 NaN 和 Infinity。')

    def test_extra_fields_are_allowed(self):
        path = self.path("extra.json", records_text(dict(GOOD, note="备注")))
        self.assertEqual(load_documents(path)[0]["note"], "备注")


class PathTest(LoaderCase):
    def test_missing_file(self):
        path = f"{self.dir}/nope.json"
        with self.assertRaises(KitError) as caught:
            load_documents(path)
        self.assertEqual(str(caught.exception),
                         f"错误：资料文件 {path}：找不到这个文件。"
                         "提示：检查路径的拼写。")

    def test_missing_default_file(self):
        with self.assertRaises(KitError) as caught:
            retrieval_qa.read_document_bytes(retrieval_qa.DOCUMENTS_PATH + ".missing", "retrieval_documents.json")
        self.assertIn("找不到这个文件", str(caught.exception))
        with mock.patch.object(retrieval_qa, "DOCUMENTS_PATH", f"{self.dir}/retrieval_documents.json"):
            with self.assertRaises(KitError) as caught:
                retrieval_qa.load_documents(retrieval_qa.DOCUMENTS_PATH)
        self.assertEqual(str(caught.exception), "错误：资料文件 retrieval_documents.json：找不到这个文件。"
                         "提示：确认它和 retrieval_qa.py 在同一个文件夹，或用 --documents 指定路径。")

    def test_windows_extra_txt_extension_is_suggested(self):
        self.path("docs.json.txt", records_text(GOOD))
        with self.assertRaises(KitError) as caught:
            load_documents(f"{self.dir}/docs.json")
        self.assertIn("同一目录下有 docs.json.txt，Windows 可能给它多加了 .txt 扩展名", str(caught.exception))

    def test_directory(self):
        with self.assertRaises(KitError) as caught:
            load_documents(self.dir)
        self.assertIn("这是一个文件夹，不是 JSON 文件。提示：用 --documents 指向文件本身，而不是它所在的文件夹", str(caught.exception))
        os.mkdir(f"{self.dir}/retrieval_documents.json")   # 学生（或解压工具）把资料文件弄成了同名的文件夹：没用过 --documents
        with self.assertRaises(KitError) as caught:
            load_documents(f"{self.dir}/retrieval_documents.json")
        self.assertIn("这是一个文件夹，不是 JSON 文件。提示：资料文件的位置上是一个同名的文件夹：删掉它，把资料文件放回来",
                      str(caught.exception))


class NeverATracebackTest(LoaderCase):
    """无论文件里是什么，命令行都只给一行中文说明、退出码 2，stdout 为空。"""

    HOSTILE = {
        "empty.json": "",
        "blank.json": "   \n\n",
        "binary.json": bytes(range(256)) * 4,
        "gbk.json": records_text(GOOD).encode("gbk"),
        "nested.json": "[" * 100_000,
        "nested_ok_depth.json": "[" * 900 + "]" * 900,
        "nan.json": "[NaN]",
        "nul.json": "[\x00]",
        "string.json": '"只是一个字符串"',
        "utf16.json": records_text(GOOD).encode("utf-16-le"),
    }

    def assert_clean_failure(self, args):
        code, out, err = run_kit(["--retrieve-only", "试用几天？"] + args)
        self.assertEqual(code, 2, err)
        self.assertEqual(out, "")
        self.assertNotIn("Traceback", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertTrue(err.startswith("错误：资料文件 "), err)

    def test_hostile_files(self):
        for name, content in self.HOSTILE.items():
            with self.subTest(name=name):
                self.assert_clean_failure(["--documents", self.path(name, content)])

    def test_directory_and_missing_path(self):
        self.assert_clean_failure(["--documents", self.dir])
        self.assert_clean_failure(["--documents", f"{self.dir}/missing.json"])



class SameInAProcessTest(unittest.TestCase):
    """这一组的命令多数在本进程里运行（kit_helpers.run_kit）。抽几条有代表性的，在真的子进程里再跑一遍，
    退出码、stdout、stderr 必须一字不差：这一组没有哪种命令只在进程内查过。"""

    def test_bom_crlf_gbk_and_a_full_width_comma(self):
        text = SHIPPED_DOCUMENTS.read_text(encoding="utf-8")
        files = {"bom-crlf.json": b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"), "gbk.json": text.encode("gbk"),
                 "comma.json": text.replace('",', '"，', 1).encode("utf-8")}
        with tempfile.TemporaryDirectory() as directory:
            assert_same_in_a_process(self, [(["--retrieve-only", "试用几天？", "--documents", str(write_temp(directory, name, data))], {})
                                            for name, data in files.items()])


if __name__ == "__main__":
    unittest.main()
