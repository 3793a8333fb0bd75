#!/usr/bin/python3
"""Generates jieba_golden.json: what Debian's python3-jieba 0.42 (the reference) says for a set of
hand-written inputs. The C++ unit tests (tests/unit/jieba/) compare against it.

  /usr/bin/python3 tests/data/golden/jieba/make_golden.py   # rewrites jieba_golden.json
"""

import json
import logging
import os
import sys

import jieba
import jieba.analyse

HERE = os.path.dirname(os.path.abspath(__file__))

SENTENCES = [
    "我来到北京清华大学",
    "他来到了网易杭研大厦",
    "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
    "今天天气不错，我们去公园散步吧！",
    "结过婚的和尚未结过婚的",
    "研究生命的起源",
    "工信处女干事每月经过下属科室都要亲口交代24口交换机等技术性器件的安装工作",
    "我用Python和C++写了一个分词器，速度提高了30.5%。",
    "iPhone 15 Pro Max的价格是9999元",
    "AT&T和T恤、A股、B超都是词典里的词",
    "下载地址：https://example.com/a_b-c.tar.gz?x=1&y=2",
    "版本号v1.2.3-rc4，编译选项-O2 -g",
    "混合 English words 和中文，还有 tabs\tand\r\nCRLF 以及\n换行",
    "表情符号😀不会让分词器崩溃🎉吗？",
    "日本語のテキストと한국어 텍스트도 섞여 있다",
    "全角字符ＡＢＣ１２３和半角ABC123",
    "繁體中文的句子會怎麼切分呢",
    "这是一个没有标点符号的很长的句子我们要看看结巴怎样处理它以及隐马尔可夫模型是否会识别未登录词",
    "李小福是创新办主任也是云计算方面的专家",
    "凯特琳在石墨烯电池研究上取得了突破",
    "云端计算平台让自定义词可以分开来用",
    "Simdup工具的去重效果很好",
    "中华人民共和国成立于1949年10月1日",
    "α、β和γ射线；温度为25℃左右",
    "",
    "   ",
    "。，、！",
    "a",
    "中",
    "12.5%和3.14以及.5和5.",
    "e-mail地址是user_name@mail.example.org",
    "C#和F#都是.NET平台上的语言",
    "叶问蔡徐坤刘亦菲周杰伦",
    "吉吉国王和毛毛住在一起",
    "他说：“你好，世界。”然后离开了",
    "长江大桥，南京市长江大桥",
    "乒乓球拍卖完了",
    "武汉市长江大桥参观",
    "人工智能是计算机科学的一个分支它企图了解智能的实质",
]

# Paragraphs for extract_tags (topK=20, withWeight=True).
PARAGRAPHS = [
    "近日，国家统计局发布了最新的经济数据。数据显示，今年前三季度国内生产总值同比增长百分之五，"
    "消费对经济增长的贡献率继续提高，制造业投资保持较快增长，高技术产业投资增长明显。",
    "开源软件社区正在讨论新的版本发布计划。开发者们希望改进编译速度，修复内存泄漏，"
    "并为分词器增加用户词典的支持。测试覆盖率和性能基准也是这次讨论的重点，性能基准尤其重要。",
    "The quick brown fox jumps over the lazy dog. This is an English paragraph with the usual "
    "stop words and it is not Chinese at all, but the keyword extractor should still work.",
    "网络爬虫抓取了大量重复的新闻网页，去重系统使用SimHash指纹检测近似重复的文档，"
    "再用Jaccard相似度验证候选对，从而避免把模板相同但内容不同的网页误判为重复。",
]


def main():
    jieba.setLogLevel(logging.WARNING)
    user = jieba.Tokenizer()
    user.load_userdict(os.path.join(HERE, "userdict.txt"))
    golden = {
        "hmm": [[s, jieba.lcut(s)] for s in SENTENCES],
        "no_hmm": [[s, jieba.lcut(s, HMM=False)] for s in SENTENCES],
        "user": [[s, user.lcut(s)] for s in SENTENCES],
        "user_freq": {w: user.FREQ.get(w, 0) for w in ["云端计算平台", "石墨烯电池", "凯特琳", "自定义词", "分开来", "Simdup工具"]},
        "user_total": user.total,
        "total": jieba.dt.total,
        "keywords": [
            [p, [[w, x] for w, x in jieba.analyse.extract_tags(p, topK=20, withWeight=True)]]
            for p in PARAGRAPHS
        ],
    }
    # An optional argument writes elsewhere (tests/python/test_golden_regenerated.py compares).
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "jieba_golden.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
