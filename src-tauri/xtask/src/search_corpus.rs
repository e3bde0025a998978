//! `cargo xtask search-corpus [--check]`: writes the search evaluation's fixture
//! corpus to `tests/fixtures/search/` from a fixed seed (no downloads): 330 short
//! articles (30 topics × 11, mostly Chinese, one English article per topic), 110
//! queries in seven classes with graded judgements, and the concept lexicon the
//! scripted embedding model of the evaluation uses. `--check` fails when the
//! committed files differ from what the generator writes.
//!
//! Judgements follow from how each text was made, never from a retriever:
//! - `zh1`, `zh2`, `zh3` (1-, 2- and 3-character queries): a document holding the
//!   string literally is relevant, 2 when its title or tags hold it, else 1.
//! - `title` (a pasted title): that document 3; others holding it 1.
//! - `tag`: documents carrying the tag 2; others mentioning it 1.
//! - `paraphrase` (Chinese, with words no document uses): the topic's documents 2.
//! - `en` (English): the topic's English document 2, its Chinese documents 1.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::json;

/// splitmix64, not the workspace's xorshift `Rng` (`inkstone_test_support::Rng`): the
/// committed corpus in `tests/fixtures/search/` is this generator's output, and
/// `search-corpus --check` holds it to that, so changing the generator would rewrite
/// the corpus and move the search evaluation's figures.
struct SplitMix64(u64);

impl SplitMix64 {
    /// splitmix64: fixed, portable, good enough for choosing words.
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// A topic: its category, tags, the words its articles use, words only queries use
/// (paraphrases), and English words.
struct Topic {
    category: &'static str,
    tags: [&'static str; 3],
    words: &'static [&'static str],
    paraphrase: &'static [&'static str],
    english: &'static [&'static str],
}

const TOPICS: &[Topic] = &[
    Topic {
        category: "生活",
        tags: ["咖啡", "手冲", "器具"],
        words: &["手冲咖啡", "咖啡豆", "磨豆机", "滤杯", "水温", "萃取", "烘焙度", "咖啡"],
        paraphrase: &["拿铁", "浓缩饮品"],
        english: &["coffee", "brewing", "espresso"],
    },
    Topic {
        category: "运动",
        tags: ["跑步", "马拉松", "训练"],
        words: &["跑步", "马拉松", "配速", "跑鞋", "拉伸", "心率", "长距离", "半程"],
        paraphrase: &["慢跑", "路跑"],
        english: &["running", "marathon", "pace"],
    },
    Topic {
        category: "户外",
        tags: ["露营", "装备", "野外"],
        words: &["露营", "帐篷", "睡袋", "营地", "炉头", "防潮垫", "天幕", "营灯"],
        paraphrase: &["野外过夜", "扎营"],
        english: &["camping", "tent", "campsite"],
    },
    Topic {
        category: "运动",
        tags: ["骑行", "单车", "路线"],
        words: &["骑行", "单车", "车架", "踏频", "头盔", "变速", "爬坡", "码表"],
        paraphrase: &["自行车", "脚踏车"],
        english: &["cycling", "bicycle", "bike"],
    },
    Topic {
        category: "美食",
        tags: ["烘焙", "面包", "厨房"],
        words: &["烘焙", "面包", "酵母", "面团", "烤箱", "发酵", "黄油", "低筋粉"],
        paraphrase: &["做西点", "烤糕点"],
        english: &["baking", "bread", "sourdough"],
    },
    Topic {
        category: "职场",
        tags: ["远程办公", "效率", "协作"],
        words: &["远程办公", "视频会议", "异步沟通", "时区", "居家", "协作工具", "专注", "通勤"],
        paraphrase: &["在家上班", "分布式团队"],
        english: &["remote", "work", "meetings"],
    },
    Topic {
        category: "学习",
        tags: ["阅读", "读书", "笔记"],
        words: &["阅读", "读书笔记", "书单", "精读", "摘抄", "书店", "纸质书", "电子书"],
        paraphrase: &["看书习惯", "啃大部头"],
        english: &["reading", "books", "notes"],
    },
    Topic {
        category: "理财",
        tags: ["理财", "预算", "储蓄"],
        words: &["理财", "预算", "储蓄", "记账", "基金", "复利", "应急金", "定投"],
        paraphrase: &["攒钱", "管钱"],
        english: &["budget", "saving", "money"],
    },
    Topic {
        category: "宠物",
        tags: ["猫", "养猫", "宠物"],
        words: &["猫咪", "猫砂", "猫粮", "逗猫棒", "驱虫", "疫苗", "猫抓板", "绝育"],
        paraphrase: &["喵星人", "铲屎官"],
        english: &["cat", "kitten", "pet"],
    },
    Topic {
        category: "摄影",
        tags: ["摄影", "相机", "构图"],
        words: &["摄影", "相机", "镜头", "光圈", "快门", "构图", "曝光", "三脚架"],
        paraphrase: &["拍照技巧", "随手拍"],
        english: &["photography", "camera", "lens"],
    },
    Topic {
        category: "旅行",
        tags: ["旅行", "攻略", "签证"],
        words: &["旅行", "行程", "签证", "机票", "酒店", "行李箱", "自由行", "攻略"],
        paraphrase: &["出国玩", "度假安排"],
        english: &["travel", "trip", "itinerary"],
    },
    Topic {
        category: "园艺",
        tags: ["园艺", "多肉", "盆栽"],
        words: &["多肉", "盆栽", "浇水", "土壤", "阳台", "换盆", "光照", "绿植"],
        paraphrase: &["种花草", "养植物"],
        english: &["gardening", "plants", "succulents"],
    },
    Topic {
        category: "健康",
        tags: ["睡眠", "作息", "健康"],
        words: &["睡眠", "失眠", "作息", "午睡", "褪黑素", "深睡", "熬夜", "早起"],
        paraphrase: &["睡不着", "休息不好"],
        english: &["sleep", "insomnia", "rest"],
    },
    Topic {
        category: "写作",
        tags: ["写作", "标题", "公众号"],
        words: &["写作", "标题", "开头", "段落", "公众号", "选题", "排版", "修改稿"],
        paraphrase: &["码字", "写文章"],
        english: &["writing", "headline", "draft"],
    },
    Topic {
        category: "科技",
        tags: ["人工智能", "模型", "提示词"],
        words: &["人工智能", "大模型", "提示词", "向量", "推理", "微调", "算力", "检索"],
        paraphrase: &["机器学习", "智能助手"],
        english: &["ai", "model", "prompt"],
    },
    Topic {
        category: "音乐",
        tags: ["吉他", "乐器", "练习"],
        words: &["吉他", "和弦", "指弹", "琴弦", "节拍器", "扫弦", "调音", "乐理"],
        paraphrase: &["弹琴", "学乐器"],
        english: &["guitar", "chords", "music"],
    },
    Topic {
        category: "家居",
        tags: ["收纳", "整理", "家居"],
        words: &["收纳", "整理", "断舍离", "衣柜", "储物盒", "抽屉", "标签机", "玄关"],
        paraphrase: &["屋子乱", "东西太多"],
        english: &["tidying", "storage", "declutter"],
    },
    Topic {
        category: "育儿",
        tags: ["育儿", "绘本", "亲子"],
        words: &["育儿", "绘本", "亲子阅读", "幼儿园", "辅食", "早教", "哄睡", "玩具"],
        paraphrase: &["带娃", "养孩子"],
        english: &["parenting", "toddler", "kids"],
    },
    Topic {
        category: "语言",
        tags: ["英语", "口语", "单词"],
        words: &["英语", "口语", "单词", "听力", "语法", "雅思", "背诵", "发音"],
        paraphrase: &["学外语", "练外语"],
        english: &["english", "vocabulary", "speaking"],
    },
    Topic {
        category: "健身",
        tags: ["健身", "力量", "增肌"],
        words: &["健身", "深蹲", "卧推", "哑铃", "增肌", "蛋白粉", "热身", "组间"],
        paraphrase: &["撸铁", "练肌肉"],
        english: &["fitness", "strength", "gym"],
    },
    Topic {
        category: "美食",
        tags: ["茶", "茶叶", "冲泡"],
        words: &["茶叶", "绿茶", "普洱", "茶具", "冲泡", "盖碗", "茶汤", "回甘"],
        paraphrase: &["品茗", "喝茶之道"],
        english: &["tea", "oolong", "teapot"],
    },
    Topic {
        category: "户外",
        tags: ["登山", "徒步", "高原"],
        words: &["登山", "徒步", "登山杖", "海拔", "冲锋衣", "高原反应", "垭口", "补给"],
        paraphrase: &["爬大山", "上雪山"],
        english: &["hiking", "trekking", "mountain"],
    },
    Topic {
        category: "科技",
        tags: ["编程", "代码", "开源"],
        words: &["编程", "代码", "开源", "调试", "单元测试", "重构", "编译器", "版本控制"],
        paraphrase: &["写程序", "软件开发"],
        english: &["programming", "code", "software"],
    },
    Topic {
        category: "美食",
        tags: ["家常菜", "做饭", "菜谱"],
        words: &["家常菜", "菜谱", "火候", "调味", "炒锅", "备菜", "红烧", "清蒸"],
        paraphrase: &["下厨", "烧饭做菜"],
        english: &["cooking", "recipe", "kitchen"],
    },
    Topic {
        category: "艺术",
        tags: ["书法", "毛笔", "临帖"],
        words: &["书法", "毛笔", "临帖", "宣纸", "墨汁", "楷书", "笔锋", "字帖"],
        paraphrase: &["练字", "写大字"],
        english: &["calligraphy", "brush", "ink"],
    },
    Topic {
        category: "交通",
        tags: ["电动车", "充电", "续航"],
        words: &["电动车", "充电桩", "续航", "电池", "快充", "里程", "能耗", "补能"],
        paraphrase: &["新能源汽车", "开电车"],
        english: &["ev", "charging", "battery"],
    },
    Topic {
        category: "心理",
        tags: ["情绪", "焦虑", "冥想"],
        words: &["情绪", "焦虑", "冥想", "呼吸", "压力", "正念", "倾诉", "复盘"],
        paraphrase: &["心情低落", "内耗"],
        english: &["anxiety", "meditation", "stress"],
    },
    Topic {
        category: "影视",
        tags: ["电影", "影评", "导演"],
        words: &["电影", "影评", "导演", "剧本", "镜头语言", "配乐", "院线", "片单"],
        paraphrase: &["看片", "观影"],
        english: &["movie", "film", "director"],
    },
    Topic {
        category: "游戏",
        tags: ["桌游", "规则", "聚会"],
        words: &["桌游", "规则书", "骰子", "卡牌", "回合", "聚会", "策略", "版图"],
        paraphrase: &["玩桌面游戏", "朋友局"],
        english: &["boardgame", "dice", "cards"],
    },
    Topic {
        category: "环保",
        tags: ["垃圾分类", "环保", "回收"],
        words: &["垃圾分类", "回收", "厨余", "环保", "可回收物", "减塑", "堆肥", "旧衣"],
        paraphrase: &["绿色生活", "少扔东西"],
        english: &["recycling", "waste", "compost"],
    },
];

/// Rare words, each planted in a few articles: the targets of one-character queries.
const MARKERS: &[&str] = &["鲸", "鹤", "驼", "蝉", "鸦", "蜗", "鹿", "狐", "蚁", "龟", "萤", "鹭", "蛙", "豹", "獭", "雁", "蚌", "鳄", "蜓", "鸥"];

const TITLES: &[&str] = &[
    "{a}入门：新手最常问的{n}个问题",
    "我和{a}的第{n}年",
    "{a}与{b}：一次说清楚",
    "关于{a}，我踩过的{n}个坑",
    "把{a}做好的{n}个细节",
    "{a}清单：从{b}到{c}",
    "为什么你的{a}总是不顺",
    "{a}周记（{n}）",
    "从零开始的{a}",
    "聊聊{a}里的{b}",
];
const SENTENCES: &[&str] = &[
    "第一次接触{a}的时候，我最在意的是{b}。",
    "很多人觉得{a}很难，其实关键在于{b}。",
    "如果预算有限，可以先从{a}开始，再慢慢考虑{b}。",
    "{a}和{b}之间的关系，常常被忽略。",
    "这一周我把{a}的时间固定下来，效果比想象中好。",
    "朋友问我{a}要注意什么，我的回答是先把{b}弄明白。",
    "记录下来之后才发现，{a}的进步大多来自{b}。",
    "关于{c}，网上的说法很多，我只说自己的经验。",
    "别急着买贵的{a}，先确认自己真的需要{b}。",
    "每次复盘{a}，我都会单独看一眼{c}。",
];
const FILLERS: &[&str] = &["慢一点反而更快。", "这件事没有标准答案。", "坚持比方法更重要。", "下次再写写细节。", "欢迎在评论里聊聊你的做法。", "天气好的时候心情也会好。"];
const EN_TITLES: &[&str] = &["A beginner's guide to {a}", "What I learned from {a} and {b}", "Notes on {a}"];
const EN_SENTENCES: &[&str] = &[
    "When I started with {a}, the hardest part was {b}.",
    "Most advice about {a} skips the basics of {b}.",
    "Keep a simple log of your {a}; patterns show up fast.",
    "Spend less on {a} gear until you know what you need.",
];

fn fill(template: &str, words: &[&str; 3], n: usize) -> String {
    template.replace("{a}", words[0]).replace("{b}", words[1]).replace("{c}", words[2]).replace("{n}", &n.to_string())
}

struct Doc {
    id: String,
    topic: usize,
    english: bool,
    title: String,
    tags: Vec<String>,
    category: String,
    body: String,
}

impl Doc {
    fn source(&self) -> String {
        format!("---\ntags: [{}]\ncategory: {}\n---\n\n{}", self.tags.join(", "), self.category, self.body)
    }
}

fn three<'a>(rng: &mut SplitMix64, words: &[&'a str]) -> [&'a str; 3] {
    let a = rng.pick(words);
    let mut b = rng.pick(words);
    while b == a {
        b = rng.pick(words);
    }
    let mut c = rng.pick(words);
    while c == a || c == b {
        c = rng.pick(words);
    }
    [a, b, c]
}

fn documents(rng: &mut SplitMix64) -> Vec<Doc> {
    let mut docs = Vec::new();
    let mut titles = std::collections::BTreeSet::new();
    for (topic_idx, topic) in TOPICS.iter().enumerate() {
        for k in 0..11 {
            let english = k == 10;
            let id = format!("d{:03}", docs.len() + 1);
            let (title, body) = loop {
                let words = three(rng, topic.words);
                let (title, body) = if english {
                    let en = three(rng, topic.english);
                    let title = fill(rng.pick(EN_TITLES), &en, 0);
                    let body: Vec<String> = (0..4 + rng.below(3)).map(|_| fill(rng.pick(EN_SENTENCES), &three(rng, topic.english), 0)).collect();
                    (title, body.join(" "))
                } else {
                    let title = fill(rng.pick(TITLES), &words, 3 + rng.below(8));
                    let mut paragraphs = Vec::new();
                    for _ in 0..3 + rng.below(3) {
                        let mut paragraph = String::new();
                        for _ in 0..3 + rng.below(3) {
                            paragraph.push_str(&fill(rng.pick(SENTENCES), &three(rng, topic.words), 0));
                            if rng.below(3) == 0 {
                                paragraph.push_str(rng.pick(FILLERS));
                            }
                        }
                        paragraphs.push(paragraph);
                    }
                    (title, paragraphs.join("\n\n"))
                };
                if titles.insert(title.clone()) {
                    break (title, body);
                }
            };
            let mut tags: Vec<String> = topic.tags.iter().map(|t| (*t).to_owned()).collect();
            tags.truncate(2 + rng.below(2));
            docs.push(Doc { id, topic: topic_idx, english, title, tags, category: topic.category.to_owned(), body });
        }
    }
    // Plant each marker in 2–5 Chinese articles, in the title of one of them now and then.
    for marker in MARKERS {
        let n = 2 + rng.below(4);
        for j in 0..n {
            let idx = rng.below(docs.len());
            if docs[idx].english {
                continue;
            }
            if j == 0 && rng.below(3) == 0 {
                docs[idx].title = format!("{}（{marker}）", docs[idx].title);
            } else {
                docs[idx].body.push_str(&format!("\n\n窗外有一只{marker}，我看了很久。"));
            }
        }
    }
    docs
}

struct Query {
    id: String,
    class: &'static str,
    q: String,
    judgements: BTreeMap<String, u32>,
}

/// Literal judgements: 2 in the title or tags, 1 in the body.
fn literal_judgements(docs: &[Doc], needle: &str) -> BTreeMap<String, u32> {
    let lower = needle.to_lowercase();
    docs.iter()
        .filter_map(|d| {
            if d.title.to_lowercase().contains(&lower) || d.tags.iter().any(|t| t.contains(needle)) {
                Some((d.id.clone(), 2))
            } else if d.body.to_lowercase().contains(&lower) {
                Some((d.id.clone(), 1))
            } else {
                None
            }
        })
        .collect()
}

fn queries(rng: &mut SplitMix64, docs: &[Doc]) -> Vec<Query> {
    let mut out: Vec<Query> = Vec::new();
    let mut push = |class: &'static str, q: String, judgements: BTreeMap<String, u32>| {
        if judgements.values().any(|g| *g > 0) && !out.iter().any(|x| x.q == q) {
            let id = format!("q{:03}", out.len() + 1);
            out.push(Query { id, class, q, judgements });
        }
    };
    for marker in MARKERS {
        push("zh1", (*marker).to_owned(), literal_judgements(docs, marker));
    }
    let words_of = |len: usize| -> Vec<&'static str> { TOPICS.iter().flat_map(|t| t.words.iter().copied()).filter(|w| w.chars().count() == len).collect() };
    let (two, three) = (words_of(2), words_of(3));
    for _ in 0..20 {
        let w = rng.pick(&two);
        push("zh2", w.to_owned(), literal_judgements(docs, w));
    }
    for _ in 0..15 {
        let w = rng.pick(&three);
        push("zh3", w.to_owned(), literal_judgements(docs, w));
    }
    for _ in 0..15 {
        let doc = &docs[rng.below(docs.len())];
        let mut judgements = literal_judgements(docs, &doc.title);
        judgements.insert(doc.id.clone(), 3);
        push("title", doc.title.clone(), judgements);
    }
    for _ in 0..10 {
        let topic = &TOPICS[rng.below(TOPICS.len())];
        let tag = topic.tags[rng.below(3)];
        let judgements: BTreeMap<String, u32> = docs
            .iter()
            .filter_map(|d| {
                if d.tags.iter().any(|t| t == tag) {
                    Some((d.id.clone(), 2))
                } else if d.body.contains(tag) || d.title.contains(tag) {
                    Some((d.id.clone(), 1))
                } else {
                    None
                }
            })
            .collect();
        push("tag", tag.to_owned(), judgements);
    }
    let frames = ["怎么开始{p}", "{p}有什么要注意的", "想了解{p}和{q}", "周末{p}的一些心得"];
    for _ in 0..15 {
        let idx = rng.below(TOPICS.len());
        let topic = &TOPICS[idx];
        let q = rng.pick(&frames).replace("{p}", topic.paraphrase[0]).replace("{q}", topic.paraphrase[1]);
        let judgements = docs.iter().filter(|d| d.topic == idx).map(|d| (d.id.clone(), 2)).collect();
        push("paraphrase", q, judgements);
    }
    let en_frames = ["{a} tips", "how to get into {a}", "{a} and {b}"];
    for _ in 0..15 {
        let idx = rng.below(TOPICS.len());
        let topic = &TOPICS[idx];
        let q = rng.pick(&en_frames).replace("{a}", topic.english[0]).replace("{b}", topic.english[1]);
        let judgements = docs.iter().filter(|d| d.topic == idx).map(|d| (d.id.clone(), if d.english { 2 } else { 1 })).collect();
        push("en", q, judgements);
    }
    out
}

/// The lexicon of the scripted embedding model: one concept per topic (its words,
/// its paraphrases, its English words, its tags).
fn lexicon() -> Vec<Vec<String>> {
    TOPICS
        .iter()
        .map(|t| {
            let mut forms: Vec<String> = t.words.iter().chain(t.paraphrase).chain(t.english).chain(t.tags.iter()).map(|w| (*w).to_owned()).collect();
            forms.sort();
            forms.dedup();
            forms
        })
        .collect()
}

/// The files, by name.
fn files() -> Result<BTreeMap<&'static str, String>> {
    let mut rng = SplitMix64(20_261_123);
    let docs = documents(&mut rng);
    let queries = queries(&mut rng, &docs);
    if docs.len() < 300 || queries.len() < 100 {
        bail!("the generator made {} documents and {} queries; the evaluation needs 300 and 100", docs.len(), queries.len());
    }
    let mut corpus = String::new();
    for doc in &docs {
        writeln!(corpus, "{}", json!({"id": doc.id, "title": doc.title, "source": doc.source()}))?;
    }
    let mut query_lines = String::new();
    let mut qrels = String::new();
    for query in &queries {
        writeln!(query_lines, "{}", json!({"id": query.id, "class": query.class, "q": query.q}))?;
        for (doc, grade) in &query.judgements {
            writeln!(qrels, "{} 0 {doc} {grade}", query.id)?;
        }
    }
    let lexicon = serde_json::to_string_pretty(&lexicon())? + "\n";
    Ok(BTreeMap::from([("corpus.jsonl", corpus), ("queries.jsonl", query_lines), ("qrels.txt", qrels), ("lexicon.json", lexicon)]))
}

pub fn run(dir: &Path, check: bool) -> Result<()> {
    let files = files()?;
    std::fs::create_dir_all(dir)?;
    for (name, text) in &files {
        let path = dir.join(name);
        if check {
            let committed = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
            if &committed != text {
                bail!("{} is stale: run `cargo xtask search-corpus`", path.display());
            }
        } else {
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    if !check {
        println!("wrote {} files to {}", files.len(), dir.display());
    }
    Ok(())
}
