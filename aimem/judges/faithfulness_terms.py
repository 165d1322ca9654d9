"""Word lists for the faithfulness guard (data, not logic; ``faithfulness.py`` uses them).

Relations are canonical English labels; ``RELATION_PARENTS`` says which label is the more
general one ("son" is a "child"), so a generalisation is never a distortion. English terms
are lowercase words (plurals listed, "_" for a space); Japanese terms are matched as
substrings, longest first, so ``NOT_KIN`` (大丈夫, 母語, 稲妻...) shadows the kin in them.
"""

from __future__ import annotations

import re

#: (relation, English terms, Japanese terms): a mention the interpretation must keep.
KIN: tuple[tuple[str, str, str], ...] = (
    ("daughter", "daughter daughters", "娘 長女 次女 三女 娘さん"),
    ("son", "son sons", "息子 長男 次男 三男 息子さん"),
    (
        "child",
        "child children kid kids toddler toddlers",
        "子供 子ども こども お子さん 子どもたち 赤ちゃん あかちゃん",
    ),
    (
        "mother",
        "mother mothers mom moms mum mums mommy mummy mama mamma",
        "母 母親 お母さん おかあさん かあさん 母さん ママ お袋 おふくろ",
    ),
    (
        "father",
        "father fathers dad dads daddy papa",
        "父 父親 お父さん おとうさん 父さん パパ 親父 おやじ",
    ),
    ("parent", "parent parents", "両親 父母"),
    ("wife", "wife wives", "妻 奥さん 奥様 嫁 家内 女房 嫁さん"),
    ("husband", "husband husbands", "夫 旦那 旦那さん ご主人 おっと"),
    ("spouse", "spouse spouses", "配偶者"),
    ("partner", "partner partners fiance fiancee fiancé fiancée", "パートナー 恋人 婚約者"),
    ("boyfriend", "boyfriend boyfriends", "彼氏"),
    ("girlfriend", "girlfriend girlfriends", ""),
    (
        "sister",
        "sister sisters",
        "姉 妹 姉妹 お姉さん 姉さん お姉ちゃん 姉ちゃん おねえさん おねえちゃん",
    ),
    (
        "brother",
        "brother brothers",
        "兄 弟 お兄さん 兄さん お兄ちゃん 兄ちゃん おにいさん おにいちゃん",
    ),
    ("sibling", "sibling siblings", "兄弟 兄妹 姉弟 きょうだい"),
    (
        "grandmother",
        "grandmother grandmothers grandma grandmas granny grandmom",
        "祖母 おばあちゃん ばあちゃん おばあさん",
    ),
    (
        "grandfather",
        "grandfather grandfathers grandpa grandpas granddad grandad",
        "祖父 おじいちゃん じいちゃん おじいさん",
    ),
    ("grandparent", "grandparent grandparents", "祖父母"),
    ("grandchild", "grandchild grandchildren grandkid grandkids", "孫"),
    ("grandson", "grandson grandsons", ""),
    ("granddaughter", "granddaughter granddaughters", "孫娘"),
    ("aunt", "aunt aunts auntie aunty", "叔母 伯母"),
    ("uncle", "uncle uncles", "叔父 伯父"),
    ("cousin", "cousin cousins", "従兄弟 従姉妹 従兄 従姉 従弟 従妹"),
    ("niece", "niece nieces", "姪"),
    ("nephew", "nephew nephews", "甥"),
    (
        "in-law",
        "mother-in-law father-in-law sister-in-law brother-in-law son-in-law "
        "daughter-in-law in-laws parents-in-law",
        "義母 義父 義姉 義妹 義兄 義弟 姑 舅 義理の母 義理の父 義理の姉 義理の妹 義理の兄 義理の弟",
    ),
    ("relative", "relative relatives", "親戚 親類"),
    ("family", "family families", "家族"),
    ("friend", "friend friends buddy", "友達 友人 友だち ともだち 親友 ママ友"),
    ("colleague", "colleague colleagues coworker coworkers co-worker co-workers", "同僚"),
    ("boss", "boss bosses supervisor", "上司"),
    ("subordinate", "subordinate subordinates", "部下"),
    ("neighbour", "neighbor neighbors neighbour neighbours", "隣人 近所の人"),
    ("roommate", "roommate roommates flatmate flatmates housemate", "ルームメイト"),
    ("classmate", "classmate classmates", "同級生 クラスメイト"),
    ("pet", "pet pets", "ペット"),
    ("dog", "dog dogs puppy puppies doggy", "犬 いぬ イヌ ワンちゃん わんこ 子犬"),
    ("cat", "cat cats kitten kittens kitty", "猫 ねこ ネコ にゃんこ 子猫"),
    ("rabbit", "rabbit rabbits bunny bunnies", "うさぎ ウサギ 兎"),
    ("hamster", "hamster hamsters", "ハムスター"),
)

#: Ambiguous words: they can stand for the relation, never demand it (彼女 is also "she").
KIN_WEAK: tuple[tuple[str, str, str], ...] = (
    ("girlfriend", "", "彼女"),
    ("boyfriend", "", "彼"),
    ("husband", "", "主人"),
    ("parent", "folks", "親"),
    ("cousin", "", "いとこ"),
    ("aunt", "", "おばさん"),
    ("uncle", "", "おじさん"),
    ("wife", "", "花嫁 夫人"),
    ("husband wife", "couple", "夫婦 夫妻"),
    ("parent child", "", "親子"),
    ("sibling", "only_child", ""),
    ("sister", "sis", ""),
    ("brother", "bro", ""),
    ("child", "childless childhood baby babies", "子供の頃 子どもの頃 子供のころ 子どものころ"),
    ("partner spouse wife husband boyfriend girlfriend", "single unmarried", "独身"),
    ("mother", "ma", ""),
    ("father", "pa", ""),
)

#: Words that contain a kin word but mean something else.
NOT_KIN = (
    "大丈夫 丈夫 工夫 農夫 漁夫 母語 母国 母校 保母 酵母 分母 空母 母音 稲妻 嫁ぐ 嫁い 弟子 師弟 "
    "猫舌 猫背 主人公 親切 親しい 親指 神父 兄貴分 みなさん "
    "mother_tongue mother_language mother_nature family_name hot_dog hot_dogs pet_peeve "
    "pet_peeves pet_project"
).split()

#: Broader relation of each relation (a child may be called by a broader name).
RELATION_PARENTS: dict[str, tuple[str, ...]] = {
    "daughter": ("child",),
    "son": ("child",),
    "child": ("family",),
    "mother": ("parent",),
    "father": ("parent",),
    "parent": ("family",),
    "wife": ("spouse",),
    "husband": ("spouse",),
    "spouse": ("partner", "family"),
    "boyfriend": ("partner",),
    "girlfriend": ("partner",),
    "sister": ("sibling",),
    "brother": ("sibling",),
    "sibling": ("family",),
    "grandmother": ("grandparent",),
    "grandfather": ("grandparent",),
    "grandparent": ("relative",),
    "grandson": ("grandchild",),
    "granddaughter": ("grandchild",),
    "grandchild": ("relative",),
    "aunt": ("relative",),
    "uncle": ("relative",),
    "cousin": ("relative",),
    "niece": ("relative",),
    "nephew": ("relative",),
    "in-law": ("relative",),
    "relative": ("family",),
    "boss": ("colleague",),
    "subordinate": ("colleague",),
    "dog": ("pet",),
    "cat": ("pet",),
    "rabbit": ("pet",),
    "hamster": ("pet",),
}

#: Possessives that make a relation the user's own ("my mother", 私の母).
FIRST_PERSON = r"\b(?:my|our|mine|ours)\b|私の|僕の|俺の|うちの|自分の|わたしの|ぼくの|我が"

#: A kin word after these is the user's own role ("I'm a mother"), not someone to keep.
SELF_ROLE = r"(?:\bi'm|\bi am|\bi was|\bas|\bbeing)\s+an?\s+$"

#: What a self-role implies the interpretation may mention ("a mother of two" has children).
SELF_ROLE_IMPLIES = {"parent": "child", "grandparent": "grandchild", "spouse": "spouse"}

#: Second person in English and Japanese (the interpretation must use the third person).
SECOND_PERSON = (
    r"\b(?:you|your|yours|yourself|yourselves|you're|you've|you'll|you'd)\b|あなた|貴方|お前"
)

# --- negation --------------------------------------------------------------------------------

#: Clear negations: their presence on one side only is a polarity flip.
NEGATION_EN = r"\bnot\b|\b\w+n't\b|\bcannot\b|\bnever\b|\bno longer\b|\bno\b(?![\s,]*[,.!?:;]|$)"
NEGATION_JA = (
    r"ない|無い|ません|なかった|なく|じゃな|ではな|"
    r"(?<=[ぁ-ゖ一-龯])[かがさたなばらわ]ず(?:に|[、。]|$)|せず|[らせ]ぬ(?![いぐ])"
)

#: Idioms whose negation is not a negated fact ("can't wait", しなければならない).
NEGATION_IDIOMS_EN = (
    "don't forget|do not forget|never forget|can't wait|cannot wait|can not wait|"
    "couldn't be happier|can't help|don't mind|do not mind|wouldn't mind|never mind|"
    "no problem|no worries|not bad|not too bad|not only|not just|not merely|not to mention|"
    "whether or not|or not|if not|no doubt|can't believe|no matter|don't hesitate|why not|"
    "no wonder|no way|not least"
)
NEGATION_IDIOMS_JA = (
    "なければならない|なければいけない|なければだめ|なきゃ|なくてはならない|なくてはいけない|"
    "なくちゃ|ないといけない|ないとだめ|ないと駄目|ざるを得ない|ざるをえない|かもしれない|"
    "かもしれません|しれない|違いない|ちがいない|構わない|かまわない|構いません|かまいません|"
    "仕方ない|仕方がない|しかたない|しょうがない|欠かせない|たまらない|間違いない|ほかならない|"
    "にすぎない|に過ぎない|忘れないで|忘れずに|間もなく|まもなく|何となく|なんとなく|少ない|"
    "少なかった|少なく|すくない|危ない|あぶない|危なかった|切ない|せつない|もったいない|"
    "勿体ない|限りない|つまらない|くだらない|じゃないですか|ではないか|じゃないか|"
    "ではないでしょうか|ませんか|ないかな|おさない|はかない|きたない|悪くない|わるくない|"
    "嫌いじゃない|嫌いではない"
)

#: Words that carry negative polarity: they can express a negation without "not".
NEGATIVE_POLARITY_EN = (
    r"\b(?:no|none|nobody|nothing|neither|nor|nowhere|without|anymore|quit|quits|quitting|"
    r"stop|stops|stopped|gave up|give up|gives up|dislikes?|disliked|hates?|hated|loathes?|"
    r"detests?|allergic|allergy|allergies|avoids?|avoided|avoiding|refuses?|refused|lacks?|"
    r"lacked|lacking|free|vegetarian|vegan|teetotal\w*|sober|abstains?|abstained|abstinent|"
    r"former|formerly|ex|used to|left|leaves|moved|retired|unemployed|single|alone|only|"
    r"fails?|failed|missed|lost|rarely|seldom|hardly|barely|little|less|fewer|zero|doubts?|"
    r"reluctant|hesitant|difficult|hard|struggles?|struggled|bad|poor|weak|prohibited|"
    r"forbidden|banned|off|away|instead|rather|except|unlike|against|opposed|rejects?|"
    r"rejected|denies|denied|skips?|skipped|absent|yet|prefers?|preferred|over|intoleran\w*|"
    r"impossible|incapable|inability|insufficient|illegal|invalid|ineligible|died|"
    r"passed away|broke up|divorced|dislike|distrusts?|switched|changed|gone|ended|"
    r"cancel\w*|forgot|forgets|forgotten|unsure|uncertain|unknown|poorly|badly|worse|worst|"
    r"busy|miss|misses|missing|sick|ill|afraid|scared|fears?|tired|too|instead)\b|"
    r"\b(?:un|non|dis)(?!der|til|ion|iqu|it|ivers|cuss|cover|play|tan|tri|h\b|k\b|c\b)"
    r"[a-z-]{3,}|\b[a-z]{3,}less\b|\b[a-z]+-free\b"
)
NEGATIVE_POLARITY_JA = (
    "ない|無い|ません|なかった|なく|ず|ぬ|嫌|苦手|避け|控え|やめ|辞め|止め|禁|不|無|非|未|否|"
    "反対|断|抜き|なし|以外|アレルギー|別れ|失|離れ|引っ越|元|以前|かつて|独身|一人|ひとり|"
    "菜食|ベジタリアン|ヴィーガン|卒業|退職|休み|困難|難し|下手|拒|欠|減|少な|遠慮|無理|もう|"
    "今は|亡く|死|乏し|ゼロ|変わ|やら"
)

# --- numbers ---------------------------------------------------------------------------------

#: Number words the content states and the interpretation must keep (not "one": too idiomatic).
REQUIRED_NUMBER_WORDS = {
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
}

_ORDINALS = "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth"

#: Words an interpretation may use instead of digits.
NUMBER_WORDS = {
    **REQUIRED_NUMBER_WORDS,
    "zero": "0",
    "one": "1",
    "a": "1",
    "an": "1",
    "once": "1",
    "single": "1",
    "twice": "2",
    "both": "2",
    "pair": "2",
    "couple": "2",
    "thirteen": "13",
    "fourteen": "14",
    "fifteen": "15",
    "sixteen": "16",
    "seventeen": "17",
    "eighteen": "18",
    "nineteen": "19",
    "dozen": "12",
    "noon": "12",
    "hundred": "100",
    "thousand": "1000",
    **{w: str(10 * i) for i, w in enumerate("twenty thirty forty fifty sixty".split(), 2)},
    **{w: str(10 * i) for i, w in enumerate("seventy eighty ninety".split(), 7)},
    **{w: str(10 * i) for i, w in enumerate("twenties thirties forties fifties".split(), 2)},
    **{w: str(10 * i) for i, w in enumerate("sixties seventies eighties nineties".split(), 6)},
    **{w: str(i) for i, w in enumerate(_ORDINALS.split(), 1)},
}

#: Months by name; a month name keeps a date's month number.
MONTHS = (
    "january february march april may june july august september october november december"
).split()
MONTH_ABBREVIATIONS = "jan feb mar apr may jun jul aug sep sept oct nov dec".split()

#: Scales after a number ("3万", "1.5 million"), as powers of ten (万 is 10**4).
SCALES = {"万": 4, "千": 3, "百": 2, "億": 8, "k": 3, "thousand": 3, "million": 6, "billion": 9}

# --- names -----------------------------------------------------------------------------------

#: Capitalised words that are not names worth requiring.
NOT_NAMES = set(
    (
        "i i'm i've i'll i'd im ok okay mr mrs ms dr mx st the user user's "
        "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs "
        "fri sat sun internet god oh hey hi hello yes mt jr sr ave no vs etc"
    ).split()
    + MONTHS
    + MONTH_ABBREVIATIONS
)

#: Japanese naming constructions: the kana run they mark is a name. A run is tried only
#: from its start (look-behind), and a katakana run is taken whole (possessive: nothing
#: that may follow it is katakana), so a long run costs linear time; ``JA_NAME_IN_RUN``
#: covers a match that ends inside a hiragana run.
_JA_HONORIFIC = "(?:さん|くん|ちゃん|さま|様|氏)"
JA_NAME_CONTEXTS = (
    r"名前は(?P<a>[ァ-ヴー]{2,}+|[ぁ-ゖ]{2,}?)(?=です|でした|だ|って|ちゃん|くん|さん|と|[。、！!？?\s]|$)|"
    r"(?P<b>(?<![ァ-ヴー])[ァ-ヴー]{2,}+|(?<![ぁ-ゖ])[ぁ-ゖ]{2,})" + _JA_HONORIFIC + "|"
    r"(?<![ァ-ヴー])(?P<c>[ァ-ヴー]{2,}+)(?:という名|って名|と名付け|と呼|と言います|と申します)"
)
#: A hiragana name right where a match ends inside a hiragana run (ミケちゃんはなこさん).
JA_NAME_IN_RUN = r"(?P<b>[ぁ-ゖ]{2,})" + _JA_HONORIFIC

#: Kana words a naming construction may hold that are not names (名前はまだない).
JA_NOT_NAMES = tuple("まだ ない なし ひみつ ありません わからない ふめい こちら".split())

#: Particles a hiragana run may start with before the name itself (私はさくらちゃん).
JA_LEADING_PARTICLES = "はがのをにともでへや"

#: Hepburn romaji of the basic hiragana, then the contracted (youon) pairs.
_KANA_ROWS = (
    "あa いi うu えe おo かka きki くku けke こko さsa しshi すsu せse そso たta ちchi つtsu "
    "てte とto なna にni ぬnu ねne のno はha ひhi ふfu へhe ほho まma みmi むmu めme もmo "
    "やya ゆyu よyo らra りri るru れre ろro わwa ゐi ゑe をo んn がga ぎgi ぐgu げge ごgo "
    "ざza じji ずzu ぜze ぞzo だda ぢji づzu でde どdo ばba びbi ぶbu べbe ぼbo ぱpa ぴpi "
    "ぷpu ぺpe ぽpo ゔvu ぁa ぃi ぅu ぇe ぉo ゃya ゅyu ょyo ゎwa "
    "きゃkya きゅkyu きょkyo しゃsha しゅshu しょsho ちゃcha ちゅchu ちょcho にゃnya にゅnyu "
    "にょnyo ひゃhya ひゅhyu ひょhyo みゃmya みゅmyu みょmyo りゃrya りゅryu りょryo ぎゃgya "
    "ぎゅgyu ぎょgyo じゃja じゅju じょjo びゃbya びゅbyu びょbyo ぴゃpya ぴゅpyu ぴょpyo "
    "ふぁfa ふぃfi ふぇfe ふぉfo てぃti でぃdi とぅtu どぅdu うぃwi うぇwe うぉwo しぇshe "
    "じぇje ちぇche ゔぁva ゔぃvi ゔぇve ゔぉvo"
).split()
ROMAJI: dict[str, str] = {}
for _entry in _KANA_ROWS:
    _split = 2 if len(_entry) > 2 and not _entry[1].isascii() else 1
    ROMAJI[_entry[:_split]] = _entry[_split:]

#: Spelling variants folded before names are compared (regex, replacement), in order:
#: Hepburn and kunrei spellings, long vowels and double consonants, l/r and v/b.
SPELLING_FOLDS = (
    *(("tch", "ch"), ("x", "ks"), ("sh", "s"), ("ch", "t"), ("ts", "t"), ("j", "z")),
    *(("f", "h"), ("l", "r"), ("v", "b"), ("c", "k"), ("m(?=[bp])", "n")),
    *(("(?<=[^aeiouy ])y", ""), ("ou", "o"), ("oh(?![aeiou])", "o"), (r"(.)\1+", r"\1")),
)

#: Kanji numerals: digits, units within a section, and section multipliers.
KANJI_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"零": 0}
KANJI_UNITS = {"十": 10, "百": 100, "千": 1000}
KANJI_SECTIONS = {"万": 10_000, "億": 100_000_000}


def alternation(words: list[str]) -> str:
    """A regex of the words, longest first so that 祖母 wins over 母."""
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


def _kin_lookup() -> dict[str, tuple[tuple[str, ...], bool]]:
    """Each kin word: the relations it names, and whether a mention must be kept."""
    lookup: dict[str, tuple[tuple[str, ...], bool]] = {w: ((), False) for w in NOT_KIN}
    for rows, strong in ((KIN_WEAK, False), (KIN, True)):
        for relations, en, ja in rows:
            for word in f"{en} {ja}".split():
                lookup[word] = (tuple(relations.split()), strong)
    return {word.replace("_", " "): value for word, value in lookup.items()}


def _lineage(relation: str) -> set[str]:
    """The relation and every broader one ("son": son, child, family)."""
    found = {relation}
    for parent in RELATION_PARENTS.get(relation, ()):
        found |= _lineage(parent)
    return found


KIN_LOOKUP = _kin_lookup()
LINEAGE = {r: _lineage(r) for relations, _ in KIN_LOOKUP.values() for r in relations}
MONTH_NUMBERS = {m: str(i) for i, m in enumerate(MONTHS, 1)} | {
    m: str(i - (i > 9)) for i, m in enumerate(MONTH_ABBREVIATIONS, 1)
}
