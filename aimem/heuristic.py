"""An offline judge: scores the four rubric components from cue vocabularies.

``HeuristicJudge`` is the fallback when no LLM is configured, so it must be free, fast
(well under a millisecond per item), deterministic and usable in English and Japanese.
It reads a memory the way the rubric asks a person to: what in it would hurt to lose
(emotional impact), whose life it is about (user relevance), whether it tells us
something new about the user (novelty) and whether it will change future help
(utility). Low-value chatter (greetings, thanks, weather, meals, trivia, passing
moods) is damped. Length, capitals and "!!!" are ignored on purpose: they appear in
every band of the evaluation data.

Each vocabulary is a broad list for one category of meaning (illnesses, drugs,
relations, life events...), not the words of particular examples, so the judge
generalises beyond the data it was tuned on.

Example:
    >>> judge = HeuristicJudge()
    >>> judge.score("I'm allergic to penicillin.").priority_score > judge.score(
    ...     "ok thanks").priority_score
    True
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .models import Interpretation, Memory
from .scoring import COMPONENT_MAX

__all__ = ["HeuristicJudge"]


def _rx(en: str = "", ja: str = "") -> re.Pattern[str]:
    """Compile one cue, matched against lowercased text: English as words, Japanese anywhere.

    Both arguments are ``|``-separated, lowercase alternatives (regex fragments). English
    boundaries are ASCII-only so that a term inside Japanese text ("夫がalsと") still
    matches, and ASCII terms in the Japanese list ("ps5") are matched the English way.
    Japanese has no spaces, so its terms match as substrings. English terms are grouped
    by first letter, which lets the regex engine skip most branches at once.
    """
    japanese = [t for t in _alternatives(ja) if not t[0].isascii()]
    english = [t for t in (*_alternatives(en), *_alternatives(ja)) if t[0].isascii()]
    parts = []
    if english:
        parts.append(r"(?<![a-z0-9_])(?:" + _by_first_letter(english) + r")(?![a-z0-9_])")
    if japanese:  # the lookahead skips every Japanese branch at an ASCII position at once
        parts.append(r"(?=[^\x00-\x7f])(?:" + "|".join(japanese) + ")")
    return re.compile("|".join(parts))


def _alternatives(pattern: str) -> list[str]:
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


def _by_first_letter(terms: Sequence[str]) -> str:
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

_FIRST_PERSON = _rx(
    r"i|i'm|im|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|we'll|our|ours|us",
    ja="私|わたし|僕|ぼく|俺|おれ|自分|あたし|うちの|我が家|家では",
)
_USER_REF = _rx(
    r"user|user's|users'|the user|syui|syui's",
    ja="ユーザー|ユーザ|syui",
)
_THIRD_PERSON = _rx(
    r"he|she|they|his|her|their|them|he's|she's|they're",
)
# Subject-less notes ("Got laid off yesterday.", "Prefers tea.") are about the speaker.
_IMPLIED_SUBJECT_EN = re.compile(
    r"^\W*(?:just |really |finally |still |also |recently |now |already )?"
    r"(?:got|gotten|gonna|going|went|found|had|has|have|was|been|started|starting|finished|"
    r"moved|moving|bought|lost|quit|thinking|planning|trying|working|learning|training|"
    r"feeling|heading|prefers?|likes?|loves?|enjoys?|hates?|uses?|using|lives?|living|works?|"
    r"studying|studies|can't|cannot|need|needs|want|wants|hoping|saving|married|engaged|"
    r"divorced|diagnosed|allergic|retired|pregnant|turned|turning|clicked|picked|watched|"
    r"played|ate|drank|slept|woke|switched|takes|taking|might|may|\d+ (?:years?|months?|"
    r"weeks?|days?)|"
    # imperatives addressed to the assistant are the user's standing wishes
    r"always|never|please|don't|do not|reply|respond|answer|write|call|address|speak|talk|"
    r"keep|send|give|show|include|format|remind|avoid|stop|skip|explain|translate|refer)\b"
)
# Japanese drops the subject: a finite verb of doing or feeling ("始めました", "飼っています",
# "行く", "ください") marks a statement about the speaker, unlike a bare "...です" fact.
_IMPLIED_SUBJECT_JA = re.compile(
    r"ます|ました|ません|ている|ていた|てる|てた|たい|った|んだ|した|になった|られた|ください"
    r"|行く|始め|飼って|使って|読む|住んで|働いて|作る|好き|苦手|嫌い|てきた|予定|つもり|実家|地元"
)
_FAMILY = _rx(
    r"mom|mum|mother|mama|dad|father|papa|parents?|sons?|daughters?|kids?|child|children|baby|"
    r"babies|twins?|toddler|wife|husband|spouse|partner|boyfriend|girlfriend|fianc[eé]e?|"
    r"brothers?|sisters?|siblings?|"
    r"grand(?:ma|pa|mother|father|parents?|son|daughter|child|children|kids?)|aunt|uncle|"
    r"cousins?|nieces?|nephews?|in-laws?|step(?:son|daughter|mom|dad|mother|father)|my ex|"
    r"family|best friend",
    ja="母|父|妻|夫|嫁|旦那|息子|娘|子ども|子供|兄|姉|弟|妹|祖母|祖父|家族|彼氏|彼女|両親|親|"
    "孫|婚約者|恋人|主人|ママ|パパ",
)
# Close family: their names and events are what a good assistant must keep.
_CORE_FAMILY = _rx(
    r"sons?|daughters?|kids?|child|children|baby|twins?|wife|husband|spouse|partner|boyfriend|"
    r"girlfriend|fianc[eé]e?",
    ja="妻|夫|息子|娘|子ども|子供|婚約者|恋人|彼氏|彼女|主人",
)
# Owning a pet, not seeing one: "a rabbit-shaped cloud" is not a pet.
_PETS = _rx(
    r"(?:my|our|their|his|her|user's|have|has|got|adopted|rescued|named) (?:an? |\w+ ){0,3}"
    r"(?:pets?|dogs?|pupp(?:y|ies)|cats?|kittens?|kitty|rabbits?|bunny|hamsters?|parrots?"
    r"|horses?|beagle|labrador|retriever|poodle|terrier|corgi|dachshund|shiba|husky|lizard"
    r"|snake|tortoise|turtle|fish|goldfish|greyhound|spaniel|collie|pug|bulldog|shepherd"
    r"|rescue)|pets",
    ja="猫|ねこ|ネコ|犬|いぬ|イヌ|ペット|うさぎ|ハムスター|インコ",
)
_IDENTITY = _rx(
    r"my name is|my name's|call me|go by|pronouns?|they/them|she/her|he/him|trans(?:gender)?|"
    r"non-?binary|gay|lesbian|bisexual|queer|asexual|muslim|jewish|christian|catholic|hindu|"
    r"buddhist|sikh|atheist|mormon|religious|halal|kosher|vegan|vegetarian|immigrant|"
    r"immigrated|refugee|asylum|citizenship|veteran|"
    r"single (?:mom|mum|mother|dad|father|parent)|widow(?:er|ed)?|caregiver|carer|"
    r"orphan(?:ed)?|grew up in|i'm from|i am from|born and raised|native speaker|heritage|"
    r"care home|nursing home|assisted living|can't live alone|"
    r"(?:looks?|looking) after (?:my|their|his|her)|"
    r"(?:takes?|taking) care of (?:my|their|his|her)|mov(?:es|ing) in with (?:us|me)",
    ja="私の名前|僕の名前|俺の名前|自分の名前|と呼んで|ムスリム|イスラム教|キリスト教|仏教徒|"
    "ベジタリアン|ビーガン|菜食|出身|育った|国籍|シングルマザー|シングルファーザー|母子家庭|"
    "父子家庭|難民|移民|介護",
)

# --- emotional_impact -------------------------------------------------------------------

_BEREAVEMENT = _rx(
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
_SERIOUS_HEALTH = _rx(
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
_UPHEAVAL = _rx(
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
_MILESTONE = _rx(
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
_OTHERS_EVENT = _rx(
    r"(?:friend|friends|colleague|coworker|co-worker|cousin|neighbou?r|boss)'?s? "
    r"(?:wedding|birthday|graduation|party|engagement|baby shower)",
    ja="友達の結婚|友人の結婚|同僚の結婚|友達の誕生日|友人の誕生日",
)
_STRONG_FEELING = _rx(
    r"afraid|scared|terrified|fear\w*|phobia|panic attacks?|anxiety|anxious|worried sick|"
    r"nightmares?|lonely|loneliness|heartbroken|devastated|grateful|proud",
    ja="怖い|恐怖|不安|パニック|孤独|悲しい|つらい|辛かった|誇り",
)
_MILD_FEELING = _rx(
    r"love|loves|enjoy\w*|obsessed|passionate|excited|happy|miss(?:es)?|hate|hates|can't stand",
    ja="好き|大好き|楽しい|楽しみ|嫌い|ハマって|はまって",
)

# --- utility ----------------------------------------------------------------------------

_ALLERGY = _rx(
    r"allerg\w*|anaphyla\w*|epi-?pens?|epinephrine|intoleran\w*|hives|"
    r"(?:throat|face|lips?|tongue) (?:swells?|swelled|swelling|closes)|swells? up|"
    r"(?:bad|severe|allergic) reaction|reacts? badly|can't be around|can't eat|cannot eat|"
    r"can't have|gluten-free|lactose",
    ja="アレルギー|アナフィラキシー|エピペン|食べられない|不耐症|じんましん|蕁麻疹",
)
_MEDICATION = _rx(
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
    r"|oxone|codone|morphone|pramine|tyline|line)|"
    r"takes? (?:\w+ )?(?:pills?|tablets?|injections?|shots?)",
    ja="薬|服用|服薬|処方|ワーファリン|ワルファリン|インスリン|抗凝固|抗うつ剤",
)
# Imperatives the assistant must keep obeying. A mid-sentence "never" ("never seems to")
# describes rather than instructs, so only clause-initial or addressed forms count.
_INSTRUCTION_STRONG = re.compile(
    _rx(
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
_INSTRUCTION_SOFT = _rx(
    r"always|every time|from now on|by default|please|going forward",
    ja="いつも|常に|今後|お願い|てください|でください|て下さい",
)
_CONSTRAINT = _rx(
    r"has to be|have to be|needs to be|must be|must|can't do|impossible|"
    r"only (?:eat|drink|work|use|take|do)|fully remote|step-free|accessible|"
    r"(?:evenings|mornings|weekends|nights) (?:are|is) (?:basically )?(?:impossible|out)|"
    r"no (?:pork|alcohol|meat|beef|dairy|gluten|nuts|sugar|caffeine|calls|phone calls|meetings)|"
    r"(?:employer|company|legal|hard) (?:rule|requirement|policy)|"
    r"can't (?:drive|walk|hear|see|travel|fly|drink|eat|work)|privacy|address|location|"
    r"(?:don't|do not|never) share",
    ja="しなければ|できない|ダメ|だめ|禁止|ルール|条件",
)
_GOAL_STAKES = _rx(
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
_NAME = re.compile(
    r"\b(?:named|called|name is|name's|names are)\s+\S"
    r"|名前は|という名前|って名前|名前が|「[^」]{1,12}」(?:という|って|で)"
)
# A relation word followed by a capitalised given name: "son Kenji", "husband is Daniel".
# Matched on the original case, since the capital is the signal.
_RELATION_NAME = re.compile(
    r"\b(?i:son|daughter|kids?|child|children|baby|twins|wife|husband|spouse|partner"
    r"|boyfriend|girlfriend|fianc[eé]e?|brother|sister|mom|mum|mother|dad|father)"
    r"(?:'s name is|,| is| named| called)?\s+(?!I\b|The\b|A\b)[A-Z][a-z]+"
)
_PREFERENCE = _rx(
    r"prefers?|preferred|preference|rather|favou?rites?|fav|"
    r"(?:i|we|they|user|he|she) (?:really |do |don't |do not |kind of |actually )?"
    r"(?:like|love|enjoy|hate|adore|dislike)|"
    r"likes|loves|enjoys|hates|dislikes|can't stand|not a fan|big fan|fan of|obsessed|"
    r"(?:i'm|am|is|are|really|been|getting|got|gotten) into|"
    r"passionate about|go-to|dark mode|light mode|metric|imperial|units|short answers|concise|"
    r"verbose|bullet points|tone|formal|casual|instead of|morning person|night owl|"
    r"early bird|(?:cat|dog) person|more of an? \w+ person|\w+ person than|better than|"
    r"worse than",
    ja="朝型|夜型|好き|大好き|嫌い|苦手|好み|派|ハマって|はまって|推し|お気に入り|愛用|より",
)
_ROUTINE_HOBBY = _rx(
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
    "家庭菜園|ガーデニング|育てて|日課|散歩|英会話|たいてい|大抵",
)
_TOOLS = _rx(
    r"python|rust|golang|javascript|typescript|java|kotlin|swift|c\+\+|c#|ruby|php|haskell|"
    r"elixir|scala|bash|sql|postgres\w*|mysql|sqlite|mongodb|redis|docker|kubernetes|k8s|aws|"
    r"gcp|azure|linux|arch|ubuntu|debian|fedora|windows|macos|mac|macbook\w*|iphone|android|"
    r"ipad|thinkpad|chrome|firefox|safari|neovim|n?vim|emacs|vs ?code|intellij|pycharm|"
    r"jetbrains|git|github|gitlab|jira|notion|obsidian|slack|figma|excel|hugo|netlify|vercel|"
    r"wordpress|react|vue|django|flask|fastapi|rails|pytest|unittest|jest|terraform|ps5|"
    r"playstation|xbox|nintendo|switch|steam|kindle|lichess|spotify|keyboards?|monitors?|"
    r"editor|ide|terminal|shell|zsh|tmux|config|setup|machine|laptop|m[1-4]|cli|framework|"
    r"stack|(?:i|we|they|user|also|mainly|mostly|still|now) (?:use|uses|using)|"
    r"(?:i'm|we're|been|started|switched to) using|switched|deploy\w*|markdown|discord|"
    r"standing desk|raspberry pi|"
    r"home assistant|nas|server|homelab|duolingo|anki",
    ja="ps5|switch|mac|windows|linux|rust|python|vs code|ツール|エディタ|パソコン|スマホ|"
    "iphone|アプリ|cli|使って",
)
_WORK_PLACE = _rx(
    r"work(?:s|ing)? (?:as|at|for|in)|my job|my team|my company|my boss|startup|office|standup|"
    r"shifts?|developer|engineer|programmer|designer|architect|nurse|doctor|teacher|lawyer|"
    r"accountant|student|researcher|scientist|manager|consultant|freelanc\w*|"
    r"live(?:s)? (?:in|near|with|about|on)|based in|timezone|time zone|cet|cest|pst|pdt|est|"
    r"edt|utc|gmt|jst|my place|neighbou?rhood|apartment|hometown|commute|"
    r"(?:room|house|flat)mates?|live alone|landlord",
    ja="仕事|会社|職場|勤務|働いて|エンジニア|学生|教師|看護師|医者|チーム|住んで|在住|近所|"
    "実家|時差|通勤",
)
_PLAN = _rx(
    r"planning|plan(?:s)? to|thinking (?:about|of)|considering|hop(?:e|ing) to|want to|"
    r"wants to|would like to|going to|gonna|"
    r"next (?:week|month|year|spring|summer|fall|autumn|winter)|this year|someday|sometime|"
    r"eventually|trip|travel\w*|vacation|holidays?|visit\w*|saving up|budget|been meaning to|"
    r"before summer|upcoming|in q[1-4]|trying to|cut(?:ting)? (?:back|down)|diet|"
    r"los(?:e|ing) weight|get (?:fit|in shape)|"
    r"quit(?:ting)? (?:smoking|drinking|vaping|caffeine|sugar|social media)",
    ja="予定|つもり|来月|来年|来週|今度|旅行|考えて|計画|行く|したい|行きたい",
)

# --- dampers: chatter that is not worth keeping ------------------------------------------

_GREETING = _rx(
    r"hi|hello|hey|hiya|howdy|yo|good (?:morning|afternoon|evening|night|day)|gm|gn|"
    r"happy (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|holidays)|"
    r"how are you|how's it going|what's up|sup|bye|goodbye|see you|goodnight|wished|"
    r"have a (?:good|nice|great) (?:day|one|weekend|night|evening)|nice weekend",
    ja="おはよう|こんにちは|こんばんは|おやすみ|はじめまして|ただいま|お疲れ|さようなら|またね",
)
_FILLER = _rx(
    r"ok|okay|k|kk|thanks|thank you|thx|ty|cheers|got it|cool|nice|great|sounds good|perfect|"
    r"awesome|sure|yes|yeah|yep|nope|no problem|np|noted|understood|will do|that worked|"
    r"it worked|lol|lmao|haha\w*|hehe\w*|hm+|uh+|um+|oh|wow|brb|gtg|never ?mind|nvm|oops|sorry|"
    r"test(?:ing)?|say that again|come again|what|huh|replied|typed|said|just|only|funny|ugh",
    ja="了解|りょうかい|ありがとう|助かりました|助かる|はい|うん|なるほど|わかりました|"
    "分かりました|オッケー|ok|すみません|ごめん|笑|返信|とだけ",
)
_WEATHER = _rx(
    r"weather|rain\w*|sunny|cloudy|humid\w*|foggy|windy|snow\w*|drizzl\w*|forecast|heatwave|"
    r"hot (?:today|out|outside)|cold (?:today|out|outside)|freezing|temperature outside",
    ja="天気|晴れ|雨|曇り|雪|暑い|寒い|蒸し暑|気温",
)
_MEAL = _rx(
    r"breakfast|lunch|dinner|brunch|snacks?|ate|eating|toast|sandwich|pizza|burger|cereal|"
    r"chips|leftovers|coffee|tea|hungry|starving|dessert",
    ja="朝ごはん|朝食|昼ごはん|昼食|お昼|夕飯|夕食|晩ごはん|晩ご飯|食べた|ランチ|おやつ|カレー|"
    "ラーメン|お腹すい|腹減|コーヒー",
)
_PASSING = _rx(
    r"sleepy|tired|bored|sneez\w*|yawn\w*|nap|hiccups?|stubbed|spilled|dropped|jammed|battery|"
    r"charging|wifi|traffic|stuck in|in line|queue|wrong button|typo|misclick\w*|fogged|loud|"
    r"noisy|went cold|brb|afk|grab a coffee|bathroom|toilet|shower|wearing|random|anyway|"
    r"whatever|i guess|nothing much|was late|late again|running (?:\w+ ){0,3}late|"
    r"late (?:to|for)|delayed|cancelled|ugh|oops|meh|okay i guess",
    ja="トイレ|眠い|眠く|疲れた|遅れ|渋滞|充電|電池|くしゃみ|昼寝|暇|お腹が空",
)
_TRANSIENT = _rx(
    r"today|tonight|right now|just now|this (?:morning|afternoon|evening)|earlier|a moment ago|"
    r"at the moment|last night|just",
    ja="今日|さっき|今、|今は|今から|いま、|先ほど|今朝|昨日",
)
_TRIVIA = _rx(
    r"asked (?:what|how|who|when|where|why|whether|if|for|about)|what is|what's|what are|"
    r"capital of|synonym|definition of|how many|how far|how long is|"
    r"who (?:wrote|invented|discovered|was)|\d\s*[-+*/x×]\s*\d",
    ja="とは|って何|何ですか|なんで|教えて",
)
# Textbook facts: superlatives, definitions and laws of nature, with nobody in them.
_WORLD_FACT = _rx(
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
_DAMPERS: tuple[tuple[re.Pattern[str], float], ...] = (
    (_WEATHER, 0.7),
    (_MEAL, 0.5),
    (_PASSING, 0.55),
    (_TRANSIENT, 0.4),
    (_TRIVIA, 0.8),
    (_GREETING, 0.6),
)

#: Dampers about this moment only: a habit (see _HABITUAL) mostly cancels them.
_MOMENTARY = frozenset({_WEATHER, _MEAL, _PASSING, _TRANSIENT})
_HABITUAL = _rx(
    r"usually|often|always|never|tend to|every|most (?:days|mornings|evenings|nights|weekends)|"
    r"on (?:weekdays|weekends|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)|"
    r"(?:when|whenever|if|unless) it(?:'s| is| isn't)|daily|weekly|habit|routine",
    ja="いつも|よく|普段|毎日|毎朝|毎晩|毎週|たいてい|大抵|習慣|日課",
)

# --- specifics, tokens and text clean-up --------------------------------------------------

_DATE = re.compile(
    r"(?<![a-z0-9])(?:(?:19|20)\d\d|\d{1,2}(?:st|nd|rd|th|:\d\d))(?![a-z0-9])|\d+(?:月|日|年)"
    r"|(?<![a-z])(?:jan|feb|ma[ry]|apr|ju[nl]|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}(?![0-9])"
)
_PROPER_NOUN = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}\b")
_LATIN_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")
_JA_FUNCTION = re.compile(
    r"ございま(?:す|した)|でした|です|ました|ます|[はがをにとでもだけたしてのねよ]"
)
_SPACE = re.compile(r"\s+")
_STOPWORDS = frozenset(
    _alternatives(
        "a|an|the|and|or|but|to|of|in|on|at|for|with|is|are|was|were|be|been|it|this|that|i|"
        "me|my|we|our|you|your|user|user's|they|their|he|she|his|her|so|just"
    )
)

# --- weights: what each cue is worth, per component ---------------------------------------

#: Every cue category by label; the weight tables below say what each is worth.
_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bereavement", _BEREAVEMENT),
    ("serious health", _SERIOUS_HEALTH),
    ("upheaval", _UPHEAVAL),
    ("milestone", _MILESTONE),
    ("strong feeling", _STRONG_FEELING),
    ("feeling", _MILD_FEELING),
    ("identity", _IDENTITY),
    ("allergy", _ALLERGY),
    ("medication", _MEDICATION),
    ("instruction", _INSTRUCTION_STRONG),
    ("soft instruction", _INSTRUCTION_SOFT),
    ("constraint", _CONSTRAINT),
    ("goal", _GOAL_STAKES),
    ("name", _NAME),
    ("preference", _PREFERENCE),
    ("routine", _ROUTINE_HOBBY),
    ("tools", _TOOLS),
    ("work/place", _WORK_PLACE),
    ("plan", _PLAN),
    ("family", _FAMILY),
    ("pet", _PETS),
)
#: What each cue is worth per component, as a fraction of COMPONENT_MAX: emotional impact,
#: utility, and a bonus to user relevance. The strongest cue counts in full (see _combine).
# fmt: off
_WEIGHTS: dict[str, tuple[float, float, float]] = {
    #                    emotion  utility  relevance
    "bereavement":       (1.0,    0.45,    0.1),
    "upheaval":          (0.85,   0.55,    0.1),
    "serious health":    (0.8,    0.8,     0.12),
    "milestone":         (0.7,    0.6,     0.08),
    "strong feeling":    (0.5,    0.0,     0.0),
    "identity":          (0.45,   0.6,     0.2),
    "family name":       (0.45,   0.85,    0.15),
    "allergy":           (0.35,   1.0,     0.12),
    "goal":              (0.35,   0.7,     0.0),
    "medication":        (0.3,    1.0,     0.12),
    "family":            (0.2,    0.35,    0.12),
    "instruction":       (0.15,   0.95,    0.0),
    "feeling":           (0.15,   0.0,     0.0),
    "pet":               (0.12,   0.35,    0.05),
    "constraint":        (0.0,    0.65,    0.0),
    "preference":        (0.0,    0.55,    0.06),
    "name":              (0.0,    0.5,     0.0),
    "tools":             (0.0,    0.5,     0.0),
    "routine":           (0.0,    0.45,    0.05),
    "work/place":        (0.0,    0.45,    0.05),
    "plan":              (0.0,    0.45,    0.0),
    "soft instruction":  (0.0,    0.4,     0.0),
}
# fmt: on
#: Weighty cues, worth 60% of a component or more: they resist the chatter dampers and
#: add novelty (a diagnosis is the most important thing in any memory it appears in).
_WEIGHTY = frozenset(
    k for k, (emotion, utility, _) in _WEIGHTS.items() if max(emotion, utility) >= 0.6
)
#: Cues only ever noted about a person, so they imply the user without an "I"
#: ("Latex allergy, a bad one."); "can't fly" or "prefers shade" may be about anything.
_ABOUT_SOMEONE = _WEIGHTY - {"constraint"}


_MAX_ANALYSED = 2000


@dataclass(frozen=True, slots=True)
class _Reading:
    """Everything the component functions need, found in one pass over the text."""

    text: str  # normalised, original case
    cues: dict[str, float]  # label -> weight in (0, 1]
    personal: float  # 0 generic .. 1 plainly about the user
    damp: float  # 0 keep .. 1 worthless chatter
    specifics: int  # dates and proper names that make a memory particular


def _read(content: str, user_context: str | None) -> _Reading:
    """Normalise the content once and find everything the four components need.

    Cues are looked for in the head of long content only: that keeps a pasted
    16,000-character document to a few milliseconds, and what matters is rarely only at
    the end of a memory.
    """
    text = _normalise(content[: 4 * _MAX_ANALYSED])[:_MAX_ANALYSED]
    low = text.lower()
    cues = _find_cues(text, low)
    personal = _personal(low, cues, user_context)
    return _Reading(
        text=text,
        cues=cues,
        personal=personal,
        damp=_dampening(low, cues, personal),
        specifics=_specifics(text, low),
    )


def _normalise(content: str) -> str:
    """NFKC, no control characters, single spaces: what every cue is matched against."""
    text = unicodedata.normalize("NFKC", content)
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else " " for ch in text)
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    return _SPACE.sub(" ", text).strip()


def _find_cues(text: str, low: str) -> dict[str, float]:
    """Label -> weight (1.0, or less when context weakens it) for every cue present."""
    cues = {label: 1.0 for label, rx in _CUES if rx.search(low)}
    if "milestone" in cues and (
        _OTHERS_EVENT.search(low) or ("pet" in cues and not _CORE_FAMILY.search(low))
    ):  # a friend's wedding or adopting a dog is news, not a life milestone
        cues["milestone"] = 0.4
    if "family" in cues and (
        _RELATION_NAME.search(text) or ("name" in cues and _CORE_FAMILY.search(low))
    ):
        cues["family name"] = 1.0
    return cues


def _personal(low: str, cues: dict[str, float], user_context: str | None) -> float:
    """How plainly the text is about the user (1.0) rather than the world (0.0)."""
    if _FIRST_PERSON.search(low) or _USER_REF.search(low):
        return 1.0
    if user_context and user_context.strip() and user_context.strip().lower() in low:
        return 1.0
    if _CJK_RUN.search(low) and (_IMPLIED_SUBJECT_JA.search(low) or cues):
        return 0.95
    if _IMPLIED_SUBJECT_EN.search(low):
        return 0.9
    if "family" in cues or "family name" in cues:
        return 0.8
    if _ABOUT_SOMEONE & cues.keys() and not _WORLD_FACT.search(low):
        return 0.75
    if _THIRD_PERSON.search(low):
        return 0.5
    return 0.0


def _substance(cues: dict[str, float]) -> float:
    """Weight of the weightiest cue: serious content resists the chatter dampers."""
    return max((w for label, w in cues.items() if label in _WEIGHTY), default=0.0)


def _dampening(low: str, cues: dict[str, float], personal: float) -> float:
    """How much of the text is chatter: greetings, thanks, weather, meals, trivia, moods."""
    # "I usually skip breakfast" or "I bike when it isn't raining" describe a habit,
    # so the meal and weather words in them are not this moment's news.
    habitual = _HABITUAL.search(low) is not None
    chatter = 0.0
    for rx, weight in _DAMPERS:
        if rx.search(low):
            if habitual and rx in _MOMENTARY:
                weight *= 0.3
            chatter = 1.0 - (1.0 - chatter) * (1.0 - weight)
    if _is_contentless(low):
        chatter = 1.0
    if personal < 0.5 and _WORLD_FACT.search(low):
        chatter = max(chatter, 0.9)
    elif personal == 0.0 and not cues:
        chatter = max(chatter, 0.8)
    # A taste or a hobby holds off mild chatter; serious content holds off most of it.
    lasting = max((w * _WEIGHTS[label][1] for label, w in cues.items()), default=0.0)
    return chatter * (1.0 - 0.85 * max(_substance(cues), 0.6 * lasting))


def _is_contentless(low: str) -> bool:
    """True when nothing is left once greetings, thanks and filler are removed."""
    rest = _USER_REF.sub(" ", _FILLER.sub(" ", _GREETING.sub(" ", low)))
    latin = [t for t in _LATIN_TOKEN.findall(rest) if t not in _STOPWORDS]
    cjk = _JA_FUNCTION.sub("", "".join(_CJK_RUN.findall(rest)))
    return len(latin) <= 1 and len(cjk) <= 2


def _specifics(text: str, low: str) -> int:
    """Dates, times and proper names: details that make a memory particular."""
    return len(_DATE.findall(low)) + len(_PROPER_NOUN.findall(text))


def _combine(weights: Iterable[float]) -> float:
    """The strongest cue counts in full, the next ones a little: two hobbies are not a diagnosis."""
    ordered = sorted(weights, reverse=True)
    return min(1.0, sum(w * f for w, f in zip(ordered, (1.0, 0.3, 0.15, 0.1), strict=False)))


def _clip(fraction: float) -> float:
    """A fraction of a component's range -> a component value in [0, COMPONENT_MAX]."""
    return round(min(max(fraction, 0.0), 1.0) * COMPONENT_MAX, 4)


# --- the four components ------------------------------------------------------------------


def _emotional_impact(r: _Reading) -> float:
    """Grief, illness, upheaval and milestones weigh most; tastes barely register."""
    raw = _combine(w * _WEIGHTS[k][0] for k, w in r.cues.items())
    return _clip(raw * (1.0 - 0.9 * r.damp))


def _user_relevance(r: _Reading, user_context: str | None) -> float:
    """About the user, their family, identity or body; generic statements score near zero."""
    raw = 0.1 + 0.5 * r.personal
    raw += min(0.3, sum(w * _WEIGHTS[k][2] for k, w in r.cues.items()))
    if user_context and user_context.strip():
        raw += 0.1
    return _clip(raw * (1.0 - 0.7 * r.damp))


def _novelty(r: _Reading, related: Sequence[Memory]) -> float:
    """New, particular facts about the user; lowered by an existing similar memory."""
    lasting = max((w for k, w in r.cues.items() if _WEIGHTS[k][1]), default=0.0)
    raw = (
        0.15
        + 0.3 * r.personal
        + 0.15 * lasting
        + 0.25 * _substance(r.cues)
        + 0.05 * min(r.specifics, 3)
    )
    raw *= 1.0 - 0.85 * r.damp
    return _clip(raw * (1.0 - _max_similarity(r.text, related)))


def _utility(r: _Reading) -> float:
    """Will it change future help: safety facts, orders, names, plans, tastes, tools."""
    raw = _combine(w * _WEIGHTS[k][1] for k, w in r.cues.items())
    if r.personal < 0.5:  # "Python lists are zero-indexed" is not the user's setup
        raw *= 0.4
    return _clip(raw * (1.0 - 0.9 * r.damp))


# --- novelty against related memories -----------------------------------------------------


def _tokens(text: str) -> frozenset[str]:
    """Content words plus CJK character bigrams: comparable in both languages."""
    low = text.lower()
    words = {t for t in _LATIN_TOKEN.findall(low) if t not in _STOPWORDS}
    for run in _CJK_RUN.findall(low):
        words.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
    return frozenset(words)


def _max_similarity(text: str, related: Sequence[Memory]) -> float:
    """Dice overlap with the most similar related memory: 0 new .. 1 a restatement."""
    mine = _tokens(text) if related else frozenset()
    best = 0.0
    for memory in related if mine else ():
        for other_text in (memory.content, memory.interpreted_content):
            other = _tokens(_normalise(other_text))
            if other:
                best = max(best, 2 * len(mine & other) / (len(mine) + len(other)))
    return 1.0 if best >= 0.9 else best


# --- presentation -------------------------------------------------------------------------

_MAX_RESTATEMENT = 500


def _restate(text: str) -> str:
    """A normalised restatement, framed in the third person as the store reads it back."""
    if not text:
        return "(empty message)"
    if not _USER_REF.match(text.lower()):
        text = f"User: {text}"
    if len(text) > _MAX_RESTATEMENT:
        text = text[: _MAX_RESTATEMENT - 1].rstrip() + "…"
    return text


def _rationale(r: _Reading) -> str:
    """One sentence naming the strongest cues, so a reader can see why it ranked there."""
    ranked = sorted(r.cues, key=lambda k: (-_WEIGHTS[k][0] - _WEIGHTS[k][1], k))
    parts = ["cues: " + ", ".join(ranked[:3]) if ranked else "no cue"]
    who = "about the user" if r.personal >= 0.75 else "third person" if r.personal else "generic"
    parts.append(f"relevance: {who}")
    if r.damp >= 0.3:
        parts.append(f"damped as chatter ({r.damp:.1f})")
    return "; ".join(parts) + "."


class HeuristicJudge:
    """A rule-based judge with English and Japanese cue vocabularies; offline, deterministic.

    The default judge when no LLM is configured: free and instant, good at ordering
    memories (serious > everyday > chatter) rather than at nuance.

    Example:
        >>> judge = HeuristicJudge()
        >>> i = judge.score("Never schedule meetings before 10am.")
        >>> i.prompt_version, i.utility > 0.2
        ('heuristic-v1', True)
    """

    source = "heuristic"
    model = "aimem-heuristic"
    version = "1"

    async def interpret(
        self,
        content: str,
        *,
        user_context: str | None = None,
        related: Sequence[Memory] = (),
    ) -> Interpretation:
        """Satisfy the ``Judge`` protocol; the work is synchronous and instant."""
        return self.score(content, user_context=user_context, related=related)

    def score(
        self,
        content: str,
        *,
        user_context: str | None = None,
        related: Sequence[Memory] = (),
    ) -> Interpretation:
        """Score ``content``; ``related`` memories lower novelty when it repeats them."""
        reading = _read(content, user_context)
        return Interpretation(
            interpreted_content=_restate(reading.text),
            emotional_impact=_emotional_impact(reading),
            user_relevance=_user_relevance(reading, user_context),
            novelty=_novelty(reading, related),
            utility=_utility(reading),
            rationale=_rationale(reading),
            model=self.model,
            prompt_version=f"heuristic-v{self.version}",
        )
