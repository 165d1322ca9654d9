"""The offline judge's vocabularies: one broad cue per category of meaning.

Each cue is a compiled regex over lowercased text, English as words and Japanese as
substrings (``rx``): relations, life events, illnesses and drugs, instructions,
preferences, and the chatter that is not worth keeping. They are data, not logic:
``judge.py`` decides what each is worth. Broad lists, not the words of particular
examples, so the judge generalises beyond the data it was tuned on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def rx(en: str = "", ja: str = "") -> re.Pattern[str]:
    """Compile one cue, matched against lowercased text: English as words, Japanese anywhere.

    Both arguments are ``|``-separated, lowercase alternatives (regex fragments). English
    boundaries are ASCII-only so that a term inside Japanese text ("夫がalsと") still
    matches, and ASCII terms in the Japanese list ("ps5") are matched the English way.
    Japanese has no spaces, so its terms match as substrings. English terms are grouped
    by first letter, which lets the regex engine skip most branches at once.
    """
    japanese = [t for t in alternatives(ja) if not t[0].isascii()]
    english = [t for t in (*alternatives(en), *alternatives(ja)) if t[0].isascii()]
    parts = []
    if english:
        parts.append(r"(?<![a-z0-9_])(?:" + by_first_letter(english) + r")(?![a-z0-9_])")
    if japanese:  # the lookahead skips every Japanese branch at an ASCII position at once
        parts.append(r"(?=[^\x00-\x7f])(?:" + "|".join(japanese) + ")")
    return re.compile("|".join(parts))


def alternatives(pattern: str) -> list[str]:
    """Split ``pattern`` at its top-level ``|`` (not inside groups or escapes)."""
    terms, depth, start, i = [], 0, 0, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            terms.append(pattern[start:i])
            start = i + 1
        i += 1
    terms.append(pattern[start:])
    return [t for t in terms if t]


def by_first_letter(terms: Sequence[str]) -> str:
    """``["cat", "cow", "dog"]`` -> ``c(?:at|ow)|dog``: the same language, matched faster."""
    groups: dict[str, list[str]] = {}
    rest = []
    for term in terms:
        if term[:1].isalpha() and term[1:2] not in ("?", "*", "+", "{", ""):
            groups.setdefault(term[0], []).append(term[1:])
        else:
            rest.append(term)
    for first, tails in groups.items():
        rest.append(first + (tails[0] if len(tails) == 1 else "(?:" + "|".join(tails) + ")"))
    return "|".join(rest)


# --- who the memory is about (user_relevance) -------------------------------------------

#: 止め as "stopped", not the "-stopper" of a medicine (痛み止め, 咳止め, 日焼け止め).
STOPPED_JA = "(?<!痛み)(?<!咳)(?<!酔い)(?<!日焼け)(?<!下痢)(?<!かゆみ)止め"
#: 付き合う as dating, not 付き合い as a long acquaintance ("高校からの付き合い").
DATING_JA = "付き合(?!い[がはもの。、]|いで|いが長)"
FIRST_PERSON = rx(
    r"i|i'm|im|i've|ive|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|we'll|our|ours|us",
    ja="私|わたし|僕|ぼく|俺|おれ|自分|あたし|うちの|我が家|家では",
)
USER_REF = rx(
    r"user|user's|users'|the user|syui|syui's",
    ja="ユーザー|ユーザ|syui",
)
THIRD_PERSON = rx(
    r"he|she|they|his|her|their|them|he's|she's|they're",
)
#: Someone named, then what only a person does: tastes, home, work, body ("Kenji likes tea",
#: "Ana Ruiz works as a nurse"): the user's world, as an agent's consolidated notes say it.
#: Matched on the original case; words that only look like names ("Everyone") are left out.
NAMED_PERSON = re.compile(
    r"^(?!(?:He|She|It|They|You|This|That|There|Here|Who|Someone|Somebody|Anyone|Anybody|"
    r"Nobody|Everyone|Everybody|No one|People|Nothing|Everything)\b)"
    r"[A-Z][a-z]+(?: [A-Z][a-z]+)? (?:(?:really|also|still|usually|often|always|never|now|"
    r"absolutely|mostly|only) )?(?:doesn't |does not |can't |cannot )?"
    r"(?:likes?|loves?|prefers?|enjoys?|hates?|dislikes?|adores?|lives?|goes|stud(?:ies|y)|"
    r"works? (?:at|as|for|in|from|nights|part|full|remotely)|plays?|drinks?|eats?|cooks?|reads?|"
    r"is (?:allergic|married|engaged|divorced|pregnant|retired|vegan|vegetarian|afraid|"
    r"scared|into|learning|training|studying|moving|expecting|a fan))\b"
)
# Subject-less notes ("Got laid off yesterday.", "Prefers tea.") are about the speaker.
#: When something is booked: a weekday, tomorrow, next week, a clock time or a date.
_WHEN_BOOKED = (
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|next week|"
    r"at \d{1,2}(?::\d\d)?|\d{1,2}(?::\d\d)?\s*(?:am|pm)|the \d{1,2}(?:st|nd|rd|th))\b"
)
IMPLIED_SUBJECT_EN = re.compile(
    r"^\W*(?:just |really |finally |still |also |recently |now |already )?"
    r"(?:got|gotten|gonna|going|went|found|had|has|have|was|been|started|starting|finished|"
    r"moved|moving|bought|lost|quit|thinking|planning|trying|working|learning|training|haven't|havent|"
    r"feeling|heading|prefers?|likes?|loves?|enjoys?|hates?|uses?|using|lives?|living|works?|"
    r"studying|studies|can't|cannot|need|needs|want|wants|hoping|saving|married|engaged|"
    r"divorced|diagnosed|allergic|retired|pregnant|turned|turning|clicked|picked|watched|"
    r"played|ate|drank|slept|woke|switched|takes|taking|might|may|\d+ (?:years?|months?|"
    r"weeks?|days?)|"
    # imperatives addressed to the assistant are the user's standing wishes
    r"always|never|please|don't|do not|reply|respond|answer|write|call|address|speak|talk|"
    r"keep|send|give|show|include|format|remind|avoid|stop|skip|explain|translate|refer|"
    # a terse note of an appointment ("Optician on Thursday at 4") is the user's own
    r"(?:dentist|doctor|gp|physio|optician|haircut|appointment|check-?up)\b(?=.{0,20}"
    + _WHEN_BOOKED
    + "))\\b"
)
# Japanese drops the subject: a finite verb of doing or feeling ("始めました", "飼っています",
# "行く", "ください") marks a statement about the speaker, unlike a bare "...です" fact.
IMPLIED_SUBJECT_JA = re.compile(
    r"ます|ました|ません|ている|ていた|てる|てた|たい|った|んだ|した|になった|られた|ください"
    r"|行く|始め|飼って|使って|読む|住んで|働いて|作る|好き|苦手|嫌い|てきた|予定|つもり|実家|地元"
)
FAMILY = rx(
    r"mom|mum|mother|mama|dad|father|papa|parents?|sons?|daughters?|kids?|child|children|baby|"
    r"babies|twins?|toddler|wife|husband|spouse|partner|boyfriend|girlfriend|fianc[eé]e?|"
    r"brothers?|sisters?|siblings?|"
    r"grand(?:ma|pa|mother|father|parents?|son|daughter|child|children|kids?)|aunt|uncle|"
    r"cousins?|nieces?|nephews?|in-laws?|step(?:son|daughter|mom|dad|mother|father)|my ex|"
    r"family|best friend",
    ja="母|父|妻|夫|嫁|旦那|息子|娘|子ども|子供|兄|姉|弟|妹|祖母|祖父|家族|彼氏|彼女|両親|親|"
    "孫|婚約者|恋人|主人|ママ|パパ|親友|幼なじみ|一番の友達",
)
# Close family: their names and events are what a good assistant must keep.
CORE_FAMILY = rx(
    r"sons?|daughters?|kids?|child|children|baby|twins?|wife|husband|spouse|partner|boyfriend|"
    r"girlfriend|fianc[eé]e?",
    ja="妻|夫|息子|娘|子ども|子供|婚約者|恋人|彼氏|彼女|主人",
)
# Owning a pet, not seeing one: "a rabbit-shaped cloud" is not a pet.
PETS = rx(
    r"(?:my|our|their|his|her|user's|have|has|got|adopted|rescued|named) (?:an? |\w+ ){0,3}"
    r"(?:pets?|dogs?|pupp(?:y|ies)|cats?|kittens?|kitty|rabbits?|bunny|hamsters?|parrots?"
    r"|horses?|beagle|labrador|retriever|poodle|terrier|corgi|dachshund|shiba|husky|lizard"
    r"|snake|tortoise|turtle|fish|goldfish|greyhound|spaniel|collie|pug|bulldog|shepherd"
    r"|rescue)|pets",
    ja="猫|ねこ|ネコ|犬|いぬ|イヌ|ペット|うさぎ|ハムスター|インコ",
)
IDENTITY = rx(
    r"my name is|my name's|call me|go by|pronouns?|they/them|she/her|he/him|trans(?:gender)?|"
    r"non-?binary|gay|lesbian|bisexual|queer|asexual|muslim|jewish|christian|catholic|hindu|"
    r"buddhist|sikh|atheist|mormon|religious|halal|kosher|vegan|vegetarian|pescatarian|"
    r"flexitarian|plant-based|immigrant|originally from|raised in|"
    r"immigrated|refugee|asylum|citizenship|veteran|"
    r"single (?:mom|mum|mother|dad|father|parent)|widow(?:er|ed)?|caregiver|carer|"
    r"orphan(?:ed)?|grew up in|i'm from|i am from|born and raised|native speaker|heritage|"
    r"care home|nursing home|assisted living|can't live alone|"
    r"(?:looks?|looking) after (?:my|their|his|her)|"
    r"(?:takes?|taking) care of (?:my|their|his|her)|mov(?:es|ing) in with (?:us|me)",
    ja="私の名前|僕の名前|俺の名前|自分の名前|と呼んで|ムスリム|イスラム教|キリスト教|仏教徒|"
    "ベジタリアン|ビーガン|ヴィーガン|菜食|グルテンフリー|糖質制限|出身|育った|国籍|"
    "シングルマザー|シングルファーザー|母子家庭|父子家庭|難民|移民|介護",
)

# --- emotional_impact -------------------------------------------------------------------

BEREAVEMENT = rx(
    r"died|dies|dying|death|dead|deceased|passed away|passed on|"
    r"(?:mom|mum|mother|dad|father|wife|husband|son|daughter|brother|sister|grandma|grandpa"
    r"|grandmother|grandfather|friend|partner|dog|cat) (?:just )?passed|"
    r"funeral|memorial|bereave\w*|grief|grieving|mourning|miscarri\w*|stillb\w+|"
    r"lost (?:the|our|my|a) (?:baby|pregnancy)|"
    r"lost (?:my|our|her|his|their) (?:mom|mum|mother|dad|father|wife|husband|son|daughter"
    r"|brother|sister|child|baby|friend|partner|grand\w+)|"
    r"suicide|killed|murdered|put down|euthani[sz]ed|terminal(?:ly)?|hospice|end of life|"
    r"widowed|late (?:husband|wife|father|mother|son|daughter)",
    ja="亡くな|亡くし|亡き|死んだ|死去|他界|逝去|葬式|葬儀|通夜|流産|死産|自殺|急死|病死|看取|"
    "余命|死別",
)
SERIOUS_HEALTH = rx(
    r"diagnos\w*|cancer|tumou?rs?|leuk[a]?emia|lymphoma|melanoma|chemo\w*|radiotherapy|"
    r"radiation|surgery|operation|transplant|dialysis|stroke|heart attack|"
    r"heart (?:failure|condition|disease|defect)|arrhythmia|pacemaker|defibrillator|stent|"
    r"bypass|biopsy|stage [1-4iv]+|malignant|epilep\w*|seizures?|diabet\w*|hiv|aids|hepatitis|"
    r"als|multiple sclerosis|parkinson'?s|alzheimer'?s|dementia|autis\w*|adhd|bipolar|"
    r"schizophreni\w*|depression|ptsd|ocd|eating disorder|anorexia|bulimia|asthma|copd|"
    r"cystic fibrosis|lupus|crohn'?s|celiac|coeliac|sickle cell|ha?emophilia|"
    r"kidney (?:disease|failure)|cirrhosis|disorder|syndrome|disease|blind|deaf|"
    r"hard of hearing|wheelchair|paraly[sz]ed|paraplegic|quadriplegic|amputee|disabled|"
    r"disability|chronic \w+|fibromyalgia|migraines|ivf|infertil\w*|hospitali[sz]ed|icu|"
    r"intensive care|coma|concussion|brain (?:injury|damage)|spinal|remission|relapsed?|"
    r"overdosed?|addict\w*|alcoholic|sober|sobriety|rehab|recovering|long covid|hypertension|"
    r"clean (?:from|for|since)|heroin|cocaine|meth|opioid|relapse|(?:12|twelve)-step|"
    r"(?:alcoholics|narcotics) anonymous|aa meetings?|"
    r"high blood pressure|glaucoma|autoimmune|suicidal|self-harm|mental health|psychiatrist|"
    r"non-?verbal|down syndrome|cerebral palsy|hearing aids?|screen reader|service dog|"
    r"therapist|therapy|counsel(?:l)?ing|fractured|torn (?:acl|ligament|meniscus)|"
    r"broke (?:my|his|her|their) (?:leg|arm|wrist|ankle|hip|back|neck|collarbone|foot|hand)|"
    r"guide dog|sign language|pregnan\w*",
    ja="癌|がん(?!ば)|ガン|診断|病気|入院|手術|抗がん剤|難病|障害|障がい|持病|糖尿病|心臓|"
    "脳卒中|脳梗塞|てんかん|認知症|アルツハイマー|うつ病|鬱|発達障害|自閉症|喘息|透析|失明|"
    "車椅子|白血病|不妊|精神疾患|闘病|依存症|断酒|妊娠|症候群|骨折",
)
UPHEAVAL = rx(
    r"laid off|layoffs?|got fired|was fired|been fired|let go|"
    r"lost (?:my|their|his|her|our) (?:job|house|home|business|savings)|"
    r"lost (?:the|our) (?:house|home)|unemployed|jobless|bankrupt\w*|foreclos\w*|evict\w*|"
    r"homeless|divorc\w*|separating|separated|broke up|break-?up|split up|cheated|affair|"
    r"abus\w*|assault\w*|raped|harass\w*|stalk\w*|restraining order|custody|arrested|jail|"
    r"prison|lawsuit|sued|deport\w*|refugee|asylum|fled|war|wildfires?|house fire|flooded|"
    r"earthquake|hurricane|tornado|burglar\w*|robbed|car accident|car crash|traumati\w*|trauma|"
    r"(?:let|laid) (?:\w+ )?go|out of work|ran out of money|went under|shut down|closed down|"
    r"lost everything|behind on rent|can't pay|walked (?:me|them|him|her) out|escorted out|"
    r"fired (?:me|them|him|her)",
    ja="クビ|解雇|リストラ|失業|失職|倒産|破産|借金|離婚|別居|別れた|虐待|dv|暴力|ストーカー|"
    "逮捕|裁判|難民|被災|火事|火災|地震|津波|事故|住宅ローン",
)
MILESTONE = rx(
    r"wedding|married|marry|marrying|engaged|engagement|propos(?:e|ing|al)|anniversary|born|"
    r"gave birth|expecting (?:a baby|a child|our|my|twins)|adopt(?:ed|ing|ion)|graduat\w*|"
    r"due with|due date|(?:first|second|third|new) (?:child|baby)|"
    r"got into|accepted (?:to|into|at)|"
    r"admitted to|medical school|law school|grad school|phd|promot(?:ed|ion)|new job|job offer|"
    r"got hired|retir\w*|(?:i'm|we're|i am|we are|user is|they're) moving|move (?:back )?to|"
    r"moved (?:back )?to|relocat\w*|bought (?:a|our|my|their) (?:house|home|flat|apartment)|"
    r"turn(?:s|ed|ing)? \d+|birthday|first (?:child|baby|grandchild|house|home|flat|apartment)|"
    r"came out|closing on|buying (?:a|our|my|their) (?:house|home|flat|apartment)|"
    r"citizen(?:ship)?|(?:starts?|starting) (?:school|university|college|kindergarten)|"
    r"retrain\w*|career change|chang(?:e|ing) careers?|for good|resign\w*|"
    r"(?:quit|quitting|leave|leaving|left) (?:my|their|his|her) (?:job|career|company)",
    ja="結婚|婚約|プロポーズ|出産|生まれ|入学|卒業|合格|就職|転職|昇進|退職|定年|引っ越|誕生日|"
    "記念日|入籍|養子|小学校に入|起業|独立",
)
# Someone else's celebration is a social plan, not the user's own milestone.
OTHERS_EVENT = rx(
    r"(?:friend|friends|colleague|coworker|co-worker|cousin|neighbou?r|boss)'?s? "
    r"(?:wedding|birthday|graduation|party|engagement|baby shower)",
    ja="友達の結婚|友人の結婚|同僚の結婚|友達の誕生日|友人の誕生日",
)
STRONG_FEELING = rx(
    r"afraid|scared|terrified|fear\w*|phobia|panic attacks?|anxiety|anxious|worried sick|"
    r"nightmares?|lonely|loneliness|heartbroken|devastated|grateful|proud",
    ja="怖い|恐怖|不安|パニック|孤独|悲しい|つらい|辛かった|誇り",
)
MILD_FEELING = rx(
    r"love|loves|enjoy\w*|obsessed|passionate|excited|happy|miss(?:es)?|hate|hates|can't stand",
    ja="好き|大好き|楽しい|楽しみ|嫌い|ハマって|はまって",
)

# --- utility ----------------------------------------------------------------------------

ALLERGY = rx(
    r"allerg\w*|anaphyla\w*|epi-?pens?|epinephrine|intoleran\w*|hives|"
    r"(?:throat|face|lips?|tongue) (?:swells?|swelled|swelling|closes)|swells? up|"
    r"(?:bad|severe|allergic) reaction|reacts? badly|can't be around|can't eat|cannot eat|"
    r"can't have|gluten-free|lactose",
    ja="アレルギー|アナフィラキシー|エピペン|食べられない|不耐症|じんましん|蕁麻疹",
)
MEDICATION = rx(
    r"medications?|meds|prescri\w*|warfarin|coumadin|heparin|eliquis|xarelto|insulin|metformin|"
    r"lithium|ssris?|zoloft|prozac|lexapro|wellbutrin|bupropion|adderall|ritalin|"
    r"methylphenidate|vyvanse|levothyroxine|prednisone|steroids|methotrexate|opioids?|morphine|"
    r"fentanyl|tramadol|gabapentin|lamotrigine|keppra|depakote|xanax|ativan|valium|"
    r"antidepressants?|antipsychotics?|blood thinners?|anticoagulants?|beta[- ]blockers?|"
    r"statins?|maois?|birth control|prep|antiretrovirals?|immunosuppressants?|inhaler|"
    r"nitroglycerin|digoxin|dosage|dose|"
    # generic drug names by their pharmacological stems (-pril, -olol, -statin...)
    r"[a-z]{3,}(?:pril|olol|sartan|statin|azole|grel|parin|xaban|gatran|mab|tinib|cillin"
    r"|mycin|cycline|floxacin|triptan|xetine|zepam|zolam|semide|thiazide|tidine|prazole"
    r"|oxone|codone|morphone|pramine|tyline|traline)|"
    r"takes? (?:\w+ )?(?:pills?|tablets?|injections?|shots?)",
    ja="薬|服用|服薬|処方|ワーファリン|ワルファリン|インスリン|抗凝固|抗うつ剤",
)
# Imperatives the assistant must keep obeying. A mid-sentence "never" ("never seems to")
# describes rather than instructs, so only clause-initial or addressed forms count.
INSTRUCTION_STRONG = re.compile(
    rx(
        r"please don't|please do not|do not ever|don't ever|must not|mustn't|must never|"
        r"under no circumstances|not allowed|never (?:schedule|call|send|use|put|share|suggest"
        r"|mention|book|give|recommend|contact|email|text|tell|show|include|ask|assume"
        r"|bring up|remind)|make sure (?:you|to)|don't let me forget|remind me|"
        r"remember (?:that|to)|ever\.",
        ja="ないでください|ないで下さい|しないで|入れないで|一切|絶対|禁止|必ず|控えて|やめて|"
        "忘れないで|覚えておいて",
    ).pattern
    + r"|(?:^|[.!?;:,]\s*|please\s+|and\s+)(?:never|don't|do not|dont)\b"
    r"(?! (?:mind|worry|know|care|think|get me started)\b)"
    r"|(?:^|[.!?;:]\s*)no\b(?! (?:problem|worries|idea|way|big deal|thanks|thank you)\b)"
    r"|(?:^|[.!?;:]\s*)(?:please\s+)?always\s+(?!been\b|had\b|was\b)[a-z]+"
)
INSTRUCTION_SOFT = rx(
    r"always|every time|from now on|by default|please|going forward",
    ja="いつも|常に|今後|お願い|てください|でください|て下さい",
)
CONSTRAINT = rx(
    r"has to be|have to be|needs to be|must be|must|can't do|impossible|"
    r"only (?:eat|drink|work|use|take|do)|fully remote|step-free|accessible|"
    r"(?:evenings|mornings|weekends|nights) (?:are|is) (?:basically )?(?:impossible|out)|"
    r"no (?:pork|alcohol|meat|beef|dairy|gluten|nuts|sugar|caffeine|calls|phone calls|meetings)|"
    r"(?:employer|company|legal|hard) (?:rule|requirement|policy)|"
    r"can't (?:drive|walk|hear|see|travel|fly|drink|eat|work)|privacy|address|location|"
    r"(?:don't|do not|never) share",
    ja="しなければ|できない|ダメ|だめ|禁止|ルール|条件",
)
GOAL_STAKES = rx(
    r"long-term goal|life goal|(?:my|their|his|her|main|big) goal|goal is|dream (?:is|of)|"
    r"aim(?:ing)? to|by (?:19|20)\d\d|deadline|due (?:on|by)|expires?|expir\w+|bar exam|exams?|"
    r"thesis|dissertation|(?:phd|thesis|dissertation|doctoral) defen[cs]e|visa|green card|"
    r"sponsor|mortgage|loan|debt|tuition|scholarship|funding|in court|"
    r"court (?:date|case|hearing|order)|(?:court|criminal|on|stand) trial|until then|"
    r"life savings|savings?|saving for|career|"
    r"have to leave|retire(?:ment)?|top priority|"
    r"lose (?:my|our|the) (?:funding|job|house|home|visa|apartment|scholarship|license)|"
    r"everything (?:depends|rides) on|make or break",
    ja="目標|夢は|期限|締め切り|締切|試験|受験|面接|ビザ|ローン|貯金|将来|長期的|立ち上げ|人生",
)
NAME = re.compile(
    r"\b(?:named|called|name is|name's|names are)\s+\S"
    r"|\b(?:surname|last name|first name|maiden name|nickname|pronouns)\b"
    r"|名字|苗字|旧姓|名前は|という名前|って名前|名前が|「[^」]{1,12}」(?:という|って|で)"
)
# A relation word followed by a capitalised given name: "son Kenji", "husband is Daniel".
# Matched on the original case, since the capital is the signal.
RELATION_NAME = re.compile(
    r"\b(?i:son|daughter|kids?|child|children|baby|twins|wife|husband|spouse|partner"
    r"|boyfriend|girlfriend|fianc[eé]e?|brother|sister|mom|mum|mother|dad|father)"
    r"(?:'s name is|,| is| named| called)?\s+(?!I\b|The\b|A\b)[A-Z][a-z]+"
)
PREFERENCE = rx(
    r"prefers?|preferred|preference|rather|favou?rites?|fav|"
    r"(?:i|we|they|user|he|she) (?:really |do |don't |do not |kind of |actually )?"
    r"(?:like|love|enjoy|hate|adore|dislike)|"
    r"likes|loves|enjoys|hates|dislikes|can't stand|not a fan|big fan|fan of|obsessed|"
    r"(?:i'm|am|is|are|really|been|getting|got|gotten) into|"
    r"passionate about|go-to|dark mode|light mode|metric|imperial|units|short answers|concise|"
    r"verbose|bullet points|tone|formal|casual|instead of|morning person|night owl|"
    r"early bird|(?:cat|dog) person|more of an? \w+ person|\w+ person than|better than|"
    r"(?:i|we) (?:only |mostly |usually |always |just )?(?:drink|eat) (?!out\b|at\b|too\b)\w+|"
    r"worse than",
    ja="朝型|夜型|好き|大好き|嫌い|苦手|好み|派|ハマって|はまって|推し|お気に入り|愛用|より",
)
ROUTINE_HOBBY = rx(
    r"usually|often|mostly|"
    r"every (?:day|morning|evening|night|week|weekend|month|monday|tuesday|wednesday"
    r"|thursday|friday|saturday|sunday)|"
    r"most (?:mornings|days|evenings|nights|weekends)|"
    r"(?:once|twice|three times) a (?:week|month|day)|"
    r"on (?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekends)|"
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday) (?:mornings|evenings|nights)|"
    r"weekly|daily|monthly|routine|habit|hobby|hobbies|spare time|for fun|class(?:es)?|"
    r"lessons?|practi[cs]e|training for|learning|lately|these days|gotten into|rated|level|"
    r"learn(?:ed|ing|t)? (?:to|how to)|weeknights?|bedtime|in bed by|go to bed|wake up at|"
    r"volunteer\w*|club|guitar|piano|violin|drums|chess|pottery|bouldering|climbing|running|"
    r"jog(?:ging)?|marathon|yoga|gym|cycling|hik(?:e|es|ing)|camping|fishing|knitting|sewing|"
    r"painting|drawing|photography|gardening|garden|baking|bake|cooking|gaming|video games|"
    r"board games|anime|manga|novels?|fiction|non-fiction|podcasts?|dramas|audiobooks|jazz|"
    r"music|records|vinyl|choir|dancing|surfing|skiing|snowboarding|tennis|soccer|basketball|"
    r"baseball|golf|swimming|woodworking|birdwatching|meditat\w*|collect(?:s|ing)?|band|reads?|"
    r"plays?|watch(?:es)?|listens?|writes?|blog|streak|"
    r"(?:bike|bikes|cycle|cycles|walk|walks|drive|drives) to work|"
    r"(?:learning|studying|practi[cs]ing) \w+|italian|spanish|french|german|japanese|korean|"
    r"mandarin|chinese|portuguese|english|arabic",
    ja="趣味|毎日|毎朝|毎晩|毎週|週末|週に|よく|普段|習って|教室|練習|始めました|始めた|通って|"
    "ゲーム|将棋|囲碁|読書|小説|映画|音楽|ジャズ|ギター|ピアノ|ランニング|ジョギング|登山|"
    "釣り|料理|温泉|写真|アニメ|漫画|マンガ|ドラマ|筋トレ|ヨガ|サウナ|飼って|読む|聴く|ジム|"
    "家庭菜園|ガーデニング|育てて|日課|散歩|英会話|たいてい|大抵|勉強中|独学|勉強して|習い事",
)
TOOLS = rx(
    r"python|rust|golang|javascript|typescript|java|kotlin|swift|c\+\+|c#|ruby|php|haskell|"
    r"elixir|scala|bash|sql|postgres\w*|mysql|sqlite|mongodb|redis|docker|kubernetes|k8s|aws|"
    r"gcp|azure|linux|arch|ubuntu|debian|fedora|windows|macos|mac|macbook\w*|iphone|android|"
    r"ipad|thinkpad|chrome|firefox|safari|neovim|n?vim|emacs|vs ?code|intellij|pycharm|"
    r"jetbrains|git|github|gitlab|jira|notion|obsidian|slack|figma|excel|hugo|netlify|vercel|"
    r"wordpress|react|vue|django|flask|fastapi|rails|pytest|unittest|jest|terraform|ps5|"
    r"playstation|xbox|nintendo|switch|steam|kindle|spotify|keyboards?|monitors?|"
    r"member of|membership|subscription|subscribed to|"
    r"(?:basic|premium|family|free|pro) (?:\w+ )?plan|"
    r"editor|ide|terminal|shell|zsh|tmux|config|setup|machine|laptop|m[1-4]|cli|framework|"
    r"stack|(?:i|we|they|user|also|mainly|mostly|still|now) (?:use|uses|using)|"
    r"(?:i'm|we're|been|started|switched to) using|switched|deploy\w*|markdown|discord|"
    r"standing desk|raspberry pi|"
    r"home assistant|nas|server|homelab|duolingo|anki",
    ja="ps5|switch|mac|windows|linux|rust|python|vs code|ツール|エディタ|パソコン|スマホ|"
    "iphone|アプリ|cli|使って|会員|サブスク|契約して|加入して",
)
WORK_PLACE = rx(
    r"work(?:s|ing)? (?:as|at|for|in)|at work|my job|my team|my company|my boss|startup|office|"
    r"standup|(?:manage|lead|run|maintain)s? (?:a|the|our) (?:team|service|project|department)|"
    r"shifts?|developer|engineer|programmer|designer|architect|nurse|doctor|teacher|lawyer|"
    r"accountant|student|researcher|scientist|manager|consultant|freelanc\w*|"
    r"major(?:ing)? in|my degree|my course|my shift|my manager|my project|"
    r"on the (?:\w+ ){1,3}team|(?:the )?lead (?:on|of|for) the|in charge of|"
    r"(?:lead|leading|leads|running|managing) the (?:\w+ ){1,3}"
    r"(?:project|migration|team|launch|rollout)|"
    r"(?:i'm|im|i am|user is|works? as) an? (?:\w+ )?\w+(?:er|or|ist|ian)\b"
    r"(?= for| at| in|[.,!]|$)|"
    r"live(?:s)? (?:in|near|with|about|on)|based in|timezone|time zone|cet|cest|pst|pdt|est|"
    r"edt|utc|gmt|jst|my place|neighbou?rhood|apartment|hometown|commute|"
    r"(?:room|house|flat)mates?|live alone|landlord|rent|(?:get|go|come) to work|"
    r"home for (?:me|us)",
    ja="仕事|会社|職場|勤務|働いて|エンジニア|学生|教師|看護師|医者|チーム|住んで|在住|近所|"
    "実家|地元|家賃|時差|通勤|出勤|退勤|上司|部署|専攻|担当して|担当は|プロジェクト|研究室|"
    "ゼミ|入社|転職",
)
PLAN = rx(
    r"planning|plan(?:s)? to|thinking (?:about|of)|considering|hop(?:e|ing) to|want to|"
    r"wants to|would like to|going to|gonna|"
    r"next (?:week|month|year|spring|summer|fall|autumn|winter)|this year|someday|sometime|"
    r"eventually|trip|travel\w*|vacation|holidays?|visit\w*|saving up|budget|been meaning to|"
    r"before summer|upcoming|in q[1-4]|trying to|cut(?:ting)? (?:back|down)|diet|"
    r"los(?:e|ing) weight|get (?:fit|in shape)|"
    r"quit(?:ting)? (?:smoking|drinking|vaping|caffeine|sugar|social media)|"
    r"appointment|check-?up|(?:dentist|doctor|gp|physio|optician|vet|clinic|hospital|surgery)\b"
    r"(?=.{0,30}" + _WHEN_BOOKED + ")",
    ja="予定|つもり|来月|来年|来週|今度|旅行|考えて|計画|行く|したい|行きたい|予約|"
    "(?:歯医者|眼科|皮膚科|内科|外科|耳鼻科|整形外科|婦人科|病院|クリニック|健診|検診)(?=[。、に]|$)",
)

# --- dampers: chatter that is not worth keeping ------------------------------------------

GREETING = rx(
    r"hi|hello|hey|hiya|howdy|yo|good (?:morning|afternoon|evening|night|day)|gm|gn|"
    r"happy (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|holidays)|"
    r"how are you|how's it going|what's up|sup|bye|goodbye|see you|goodnight|wished|"
    r"have a (?:good|nice|great) (?:day|one|weekend|night|evening)|nice weekend",
    ja="おはよう|こんにちは|こんばんは|おやすみ|はじめまして|ただいま|お疲れ|さようなら|またね",
)
FILLER = rx(
    r"ok|okay|k|kk|thanks|thank you|thx|ty|cheers|got it|cool|nice|great|sounds good|perfect|"
    r"awesome|sure|yes|yeah|yep|nope|no problem|np|noted|understood|will do|that worked|"
    r"it worked|lol|lmao|haha\w*|hehe\w*|hm+|uh+|um+|oh|wow|brb|gtg|never ?mind|nvm|oops|sorry|"
    r"test(?:ing)?|say that again|come again|what|huh|replied|typed|said|just|only|funny|ugh",
    ja="了解|りょうかい|ありがとう|助かりました|助かる|はい|うん|なるほど|わかりました|"
    "分かりました|オッケー|ok|すみません|ごめん|笑|返信|とだけ",
)
WEATHER = rx(
    r"weather|rain\w*|sunny|cloudy|humid\w*|foggy|windy|snow\w*|drizzl\w*|forecast|heatwave|"
    r"hot (?:today|out|outside)|cold (?:today|out|outside)|freezing|temperature outside",
    ja="天気|晴れ|雨|曇り|雪|暑い|寒い|蒸し暑|気温",
)
MEAL = rx(
    r"breakfast|lunch|dinner|brunch|snacks?|ate|eating|toast|sandwich|pizza|burger|cereal|"
    r"chips|leftovers|coffee|tea|hungry|starving|dessert",
    ja="朝ごはん|朝食|昼ごはん|昼食|お昼|夕飯|夕食|晩ごはん|晩ご飯|食べた|ランチ|おやつ|カレー|"
    "ラーメン|お腹すい|腹減|コーヒー",
)
PASSING = rx(
    r"sleepy|tired|bored|sneez\w*|yawn\w*|nap|hiccups?|stubbed|spilled|dropped|jammed|battery|"
    r"charging|wifi|traffic|stuck in|in line|queue|wrong button|typo|misclick\w*|fogged|loud|"
    r"noisy|went cold|brb|afk|grab a coffee|bathroom|toilet|shower|wearing|random|anyway|"
    r"whatever|i guess|nothing much|was late|late again|running (?:\w+ ){0,3}late|"
    r"late (?:to|for)|delayed|cancelled|ugh|oops|meh|okay i guess",
    ja="トイレ|眠い|眠く|疲れた|遅れ|渋滞|充電|電池|くしゃみ|昼寝|暇|お腹が空",
)
TRANSIENT = rx(
    r"today|tonight|right now|just now|this (?:morning|afternoon|evening)|earlier|a moment ago|"
    r"at the moment|last night|just",
    ja="今日|さっき|今、|今は|今から|いま、|先ほど|今朝|昨日",
)
TRIVIA = rx(
    r"asked (?:what|how|who|when|where|why|whether|if|for|about)|what is|what's|what are|"
    r"capital of|synonym|definition of|how many|how far|how long is|"
    r"who (?:wrote|invented|discovered|was)|\d\s*[-+*/x×]\s*\d",
    ja="とは|って何|何ですか|なんで(?!す)|教えて",
)
# Textbook facts: superlatives, definitions and laws of nature, with nobody in them.
WORLD_FACT = rx(
    r"is (?:a|an|the) \w+ (?:of|in|that|which)|(?:is|are) (?:in|on|located)|means|"
    r"was (?:invented|founded|built|discovered|written|born)|people|humans|worldwide|"
    r"in the world|on earth|percent|known as|the capital|largest|tallest|highest|longest|"
    r"smallest|biggest|oldest|orbits?|boils?|freezes?|melts?|speed of|century|there are|"
    r"there is|source of|made of|consists? of|sky|sea level|planet|ocean|continent|country|"
    r"population|always|every|very|"
    # generic plural subjects: "Penguins can't fly.", "Octopuses have three hearts."
    r"^(?:most |all |many |some )?[a-z]+s (?:can|can't|cannot|have|are|were|live|eat|don't"
    r"|do|need|sleep|use|make|never)",
    ja="一番|世界|首都|日本で|有名|である|と言われ|地球|山です|国です|最も|沸騰|度で|衛星|惑星|"
    "太陽|人口|平均",
)

#: Chatter categories and how strongly each marks a text as not worth keeping.
DAMPERS: tuple[tuple[re.Pattern[str], float], ...] = (
    (WEATHER, 0.7),
    (MEAL, 0.5),
    (PASSING, 0.55),
    (TRANSIENT, 0.4),
    (TRIVIA, 0.8),
    (GREETING, 0.6),
)

#: Dampers about this moment only: a habit (see HABITUAL) mostly cancels them.
MOMENTARY = frozenset({WEATHER, MEAL, PASSING, TRANSIENT})
HABITUAL = rx(
    r"usually|often|always|never|tend to|every|most (?:days|mornings|evenings|nights|weekends)|"
    r"on (?:weekdays|weekends|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)|"
    r"(?:when|whenever|if|unless) it(?:'s| is| isn't)|daily|weekly|habit|routine",
    ja="いつも|よく|普段|毎日|毎朝|毎晩|毎週|たいてい|大抵|習慣|日課",
)

# --- specifics, tokens and text clean-up --------------------------------------------------

DATE = re.compile(
    r"(?<![a-z0-9])(?:(?:19|20)\d\d|\d{1,2}(?:st|nd|rd|th|:\d\d))(?![a-z0-9])|\d+(?:月|日|年)"
    r"|(?<![a-z])(?:jan|feb|ma[ry]|apr|ju[nl]|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}(?![0-9])"
)
PROPER_NOUN = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}\b")
LATIN_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")
JA_FUNCTION = re.compile(
    r"ございま(?:す|した)|でした|です|ました|ます|[はがをにとでもだけたしてのねよ]"
)
SPACE = re.compile(r"\s+")
STOPWORDS = frozenset(
    alternatives(
        "a|an|the|and|or|but|to|of|in|on|at|for|with|is|are|was|were|be|been|it|this|that|i|"
        "me|my|we|our|you|your|user|user's|they|their|he|she|his|her|so|just"
    )
)
