"""Slot vocabularies for the offline supersession detector and restatement (data, not logic).

Each pattern is one category of meaning in English and Japanese, compiled with
``cues.rx`` (English as words, Japanese as substrings, over lowercased text): the ways
people say they moved, changed jobs, stopped a habit, or that a date moved; who else a
sentence can be about; which words add a fact rather than replace one. Broad lists,
not the words of particular examples, so the detector generalises beyond its tuning data.
``supersession.py`` decides what they mean together.
"""

from __future__ import annotations

import re

from aimem.judges.heuristic.cues import DATING_JA, MEDICATION, STOPPED_JA, rx
from aimem.text.stemmer import stem


def _terms(en: str = "", ja: str = "") -> tuple[str, str]:
    """The raw alternatives of one table row (see ``table``)."""
    return en, ja


def table(
    rows: tuple[tuple[str, str, str], ...],
) -> tuple[tuple[tuple[str, re.Pattern[str]], ...], re.Pattern[str]]:
    """Compile named rows, plus one probe for all of them (cheaper than a search per row).

    Most texts match no row at all, so one probe usually settles it.
    """
    compiled = tuple((name, rx(en, ja)) for name, en, ja in rows)
    probe = rx("|".join(en for _, en, _ in rows if en), "|".join(ja for _, _, ja in rows if ja))
    return compiled, probe


# --- who a sentence is about ----------------------------------------------------------------

#: People other than the user: a sentence whose subject is one of these is their fact.
OTHER_PERSON_EN = (
    r"mom|mum|mother|mama|dad|father|papa|parents?|sons?|daughters?|kids?|child|children|"
    r"baby|twins?|toddler|wife|husband|spouse|partner|boyfriend|girlfriend|fianc[eé]e?|"
    r"brothers?|sisters?|siblings?|brother-in-law|sister-in-law|mother-in-law|father-in-law|"
    r"grand(?:ma|pa|mother|father|parents?|son|daughter|child|children|kids?)|aunt|uncle|"
    r"cousins?|nieces?|nephews?|in-laws?|step(?:son|daughter|mom|dad|mother|father)|ex|"
    r"(?:best |close |old )?friends?|buddy|pal|colleagues?|co-?workers?|boss|manager|"
    r"supervisor|teammates?|classmates?|neighbou?rs?|(?:room|flat|house)mates?|landlord|"
    r"tenant|business partner|client|students?|team|family|roommate"
)
OTHER_PERSON_JA = (
    "母|父|妻|夫|嫁|旦那|主人|息子|娘|子ども|子供|兄弟|兄|姉妹|姉|弟|妹|祖父母|祖母|祖父|両親|"
    "親友|親戚|親|孫|甥|姪|彼氏|彼女|恋人|婚約者|元彼|元カレ|元カノ|元夫|元妻|友達|友人|幼なじみ|"
    "幼馴染|知り合い|同級生|同僚|上司|部下|先輩|後輩|隣人|近所の人|いとこ|叔父|叔母|伯父|伯母|"
    "義母|義父|義兄|義姉|義弟|義妹|ルームメイト|チームメイト|ママ|パパ|家族"
)
OTHER_SUBJECT_EN = re.compile(
    r"^(?:(?:my|our|the user's|user's|his|her|their)\s+)(?P<rel>(?:\w+\s)?(?:"
    + OTHER_PERSON_EN
    + r"))(?:'s)?\b(?!\s+and\s+(?:i|me)\b)"
)
BARE_RELATION_EN = re.compile(
    r"^(?P<rel>mom|mum|dad|grandma|grandpa|nana)(?:'s)?\b(?!\s+and\s+(?:i|me)\b)"
    r"|^(?:an?|one|some) (?:\w+ )?(?P<rel2>friend|colleague|coworker|co-worker|cousin|neighbou?r|"
    r"classmate|teammate|relative)s? of (?:mine|ours|my \w+)\b"
)
# "私と" / "とは" (with): the user's relation, not the other person's fact.
_OWNER_JA = r"^(?:(?:私|僕|俺|うち|ユーザー|ユーザ)の)?"
OTHER_SUBJECT_JA = re.compile(
    _OWNER_JA + rf"(?P<rel>{OTHER_PERSON_JA})(?:の\S{{0,8}}?)?(?:は|が|も|の|、)"
)
#: A beneficiary: "a new bike for my daughter" is the daughter's bike.
FOR_OTHER = re.compile(
    r"\bfor (?:my|our) (?:" + OTHER_PERSON_EN + r")\b"
    r"|(?:" + OTHER_PERSON_JA + r")(?:に|の)(?:ため|プレゼント)"
)
#: Professionals acting on the user's affairs: "My doctor cut my dose" is the user's fact.
AGENT_EN = re.compile(
    r"^(?:my |the |our )?(?:doctor|dr|gp|dentist|physio|physiotherapist|optician|optometrist|"
    r"vet|psychiatrist|therapist|pharmacist|surgeon|specialist|consultant|cardiologist|"
    r"dermatologist|clinic|hospital|airline|school|hr|recruiter|landlord|agent|insurer|bank)\b"
)
USER_START = re.compile(
    r"^(?:user:\s*)?(?:the user|user|i|i'm|im|i've|i'd|i'll|we|we're|we've|we'd|we'll|"
    r"me and|my (?:\w+ )?and i)\b"
)
AND_I = re.compile(r"^\W*(?:[\w'-]+ ){1,3}and (?:i|me)\b")
NAMED_SUBJECT = re.compile(r"^(?P<name>[A-Z][a-z]{2,})\b(?! and (?:I|me)\b)")

# --- markers ---------------------------------------------------------------------------------

#: An added fact on the same topic: never a replacement.
ADDITIVE = re.compile(
    rx(
        r"also|as well|another|second|third|added|adding|in addition|besides|on top of|"
        r"one more|an extra|additionally",
        ja="追加|さらに|二匹目|2匹目|二台目|2台目|もう一|ほかにも|他にも|以外にも",
    ).pattern
    + r"|\btoo\b(?=\s*(?:[.,!;:)—–-]|$|\b(?:and|but|so|now|at|on)\b))"
    + r"|(?<=[\u4e00-\u9fff\u30a0-\u30ffにとでa-z0-9])も(?![のうっしちろ])"
)
#: Not a settled fact: questions, hypotheticals, wishes, tentative plans.
HYPOTHETICAL = rx(
    r"thinking about|thinking of|considering|might|"
    r"may (?:be|have|not|move|need|want|get|go|switch|change)|maybe|perhaps|possibly|if|whether|"
    r"would|could|should|wish|hope|hoping|hopefully|want to|wants to|wanna|dream of|"
    r"tempted|not sure|unsure|debating|deciding whether|looking into|someday|one day|"
    r"probably|likely|wondering",
    ja="かもしれ|かも|たいと思|たいな|たい。|したい|検討|考えて|迷って|悩んで|ようかな|"
    "だろう|でしょう|予定だった",
)
#: A plan, not yet a fact: blocks residence, job and possession updates (not schedule ones).
FUTURE = rx(
    r"going to|gonna|planning|plan to|plans to|will|i'll|we'll|next (?:week|month|year|spring|"
    r"summer|autumn|fall|winter)|soon|about to|intend|moving|starting in",
    ja="予定|つもり|来月|来年|来週|今度|する予定",
)
QUESTION = re.compile(r"\?\s*$|？\s*$|(?:ですか|ますか|でしょうか|かな)[。]?\s*$")
#: Something ended, stopped, was denied or given away.
END = rx(
    r"quit|quitting|stopped|stop|gave up|given up|give up|no longer|not anymore|any ?more|"
    r"not (?:actually|really)|never was|wasn't|isn't|aren't|weren't|don't|doesn't|do not|"
    r"does not|didn't|not doing|not going|decided not|decided against|called off|cancel\w*|"
    r"sold|selling|gave away|given away|got rid of|rid of|donated|lost|gone|died|dead|"
    r"passed away|passed|put down|ran away|broke up|broken up|split up|split|separated|"
    r"divorc\w*|left|leaving|resigned|retired|laid off|fired|let go|abandon\w*|dropped|"
    r"dropping|ditched|ended|is off|are off|took \w+ off|off the table|cut out|came off|weaned off|"
    r"moved out|moved away|migrat\w* off|no more|none|cured|free of|recovered|negative|"
    r"never|not|can't|cannot|can no longer|lost interest|sold off|got adopted|was adopted|"
    r"rehomed|found (?:a|him a|her a) (?:new )?home|haven't|hasn't|hadn't|done with|"
    r"finished with|kicked the habit|over it",
    ja=f"やめ|辞め|{STOPPED_JA}|退会|解約|退職|手放|売った|売却|譲った|あげた|処分|なくし|無くし|"
    "失くし|死ん|亡くな|他界|いなくな|別れ|離婚|中止|キャンセル|取りやめ|なくなり|しなく|"
    "しません|していません|ていない|じゃなく|ではなく|ではありません|ません|卒業|解消|完治|治った",
)
#: An earlier stop undone: back, again, rejoined, resumed.
RESUME = rx(
    r"again|back on|back to|back at|back in|back up|picked \w+ back|resumed|restarted|"
    r"rejoined|re-?enrolled|returned to|came out of retirement|decided to keep|keeping it|"
    r"made up|reconciled|back together|un-?cancelled|reinstated|on again|cleared me",
    ja="また|再開|再び|復帰|戻った|戻りました|仲直り|よりを戻|再入会|やっぱり",
)
#: A value replaced: the new one stands, whatever the old one was.
CHANGE = rx(
    r"moved|moving|switched|switching|changed|changing|replaced|replacing|swapped|traded|"
    r"upgraded|downgraded|instead|now|new|renamed|rescheduled|postponed|pushed|delayed|"
    r"brought forward|moved up|bumped|reduced|increased|lowered|raised|upped|doubled|halved|"
    r"cut|down to|up to|dropped to|went up|went down|changed to|turned into|became|"
    r"become|promoted|transferred|since|anymore|any more|from now on|these days|currently|"
    r"latest|updated|corrected|correction|actually|turns out|rebooked|reopened",
    ja="変更|変わ|変え|今は|今では|現在|替え|乗り換え|切り替え|移動|延期|前倒し|ずれ|増え|"
    "減っ|減ら|増や|にしました|になりました|に決め|新しい|新しく|最近は|から",
)
#: "switched from X to Y", "X instead of", "replaced X with": X is the old value.
FROM_VALUE = re.compile(
    r"\b(?:from|off|instead of|replaced|replacing|traded in|swapped|ditched|sold)\s+"
    r"(?:my |our |the |a |an )?(?P<v>[\w.'&+-]+(?: [\w.'&+-]+)?)"
)

# --- slots -----------------------------------------------------------------------------------

RESIDENCE_STATE = re.compile(
    rx(
        r"live|lives|living|lived|reside|resides|residing|based|settled|staying|"
        r"home address|my address|our address|home is|renting|rent a|"
        r"(?:my|our|user's|the user's) (?:main )?(?:flat|apartment|house|home|place|condo|"
        r"studio|address)",
        ja="住んで|住む|住ま|在住|暮らして|暮らし|住所",
    ).pattern
)
RESIDENCE_MOVE = re.compile(
    r"(?:\b(?:i|we|user|they|i've|we've|have|has|just|finally|recently|since|already|"
    r"and|then|who)\s+)(?:just |finally |recently |now |already |officially |all )?"
    r"(?:moved|relocated|emigrated|immigrated)\b(?! (?:the|my|our|it|them|all|everything|"
    r"\w+ (?:to|from) (?:a|an) \w+ (?:role|job|position)))"
    r"|\b(?:bought|buying) (?:a|our|my) (?:house|home|flat|apartment|condo) in\b"
    r"|\bnew (?:flat|apartment|house|home|place|address)\b"
    r"|\bmoving (?:day|house)\b|\bno longer live"
    r"|引っ越|引越|移り住|移住|転居|に移りました|に移った|へ移った|に越して|に移って"
)
#: Where one grew up or the family home: not where the user lives now.
RESIDENCE_EXCLUDE = rx(
    r"grew up|born|hometown|home town|family home|parents' (?:house|place|home)|childhood|"
    r"holiday home|cabin|cottage|second home|vacation home|summer house|office is|studio is "
    r"(?:on|in) an",
    ja="実家|地元|出身|生まれ|育った|別荘",
)

JOB_TITLE = (
    r"nurse|nursing|teacher|teaching|professor|lecturer|tutor|instructor|engineer|developer|"
    r"programmer|coder|designer|architect|manager|director|executive|ceo|cto|cfo|coo|vp|"
    r"founder|co-founder|owner|accountant|auditor|bookkeeper|analyst|consultant|lawyer|"
    r"attorney|solicitor|barrister|paralegal|judge|doctor|physician|surgeon|dentist|"
    r"pharmacist|therapist|psychologist|counsel(?:l)?or|social worker|paramedic|vet|"
    r"veterinarian|chef|cook|baker|barista|bartender|waiter|waitress|server|cashier|clerk|"
    r"receptionist|secretary|assistant|administrator|admin|officer|coordinator|specialist|"
    r"technician|mechanic|electrician|plumber|carpenter|builder|firefighter|police|"
    r"detective|soldier|pilot|driver|courier|scientist|researcher|postdoc|phd student|"
    r"student|intern|apprentice|writer|editor|journalist|reporter|translator|interpreter|"
    r"photographer|artist|illustrator|animator|musician|actor|actress|producer|marketer|"
    r"marketing|sales|salesperson|recruiter|banker|broker|trader|realtor|estate agent|"
    r"librarian|caregiver|carer|farmer|gardener|cleaner|freelancer|contractor|"
    r"product manager|project manager|data scientist|sysadmin|devops|sre|tester|qa|"
    r"copywriter|strategist|economist|statistician|biologist|chemist|physicist|"
    r"lab \w+|associate|partner at|principal|staff|senior|junior|lead|head of|"
    r"web developer|full-stack|frontend|backend developer|ux|ui designer|auditor|clerk"
)
JOB_STATE = re.compile(
    rx(
        r"(?:work|works|working)(?: (?:full|part)[- ]time)? (?:as|at|for)|worked as|"
        r"employed|my job|my employer|my role|my position|my title|"
        r"job title|job is|freelance|freelancing|self-employed|unemployed|retired from|"
        r"i'm an? (?:\w+ ){0,3}(?:"
        + JOB_TITLE
        + r")|i am an? (?:\w+ ){0,3}(?:"
        + JOB_TITLE
        + r")|user is an? (?:\w+ ){0,3}(?:"
        + JOB_TITLE
        + r")|the user is an? (?:\w+ ){0,3}(?:"
        + JOB_TITLE
        + r")|(?:user|the user) works",
        ja="で働いて|として働|に勤め|に勤務|で勤務|勤めて|仕事は|職業|会社員|をしています|"
        "の仕事|エンジニア|看護師|教師|公務員|営業|事務|職員|店員|社員|アルバイト|パート",
    ).pattern
)
JOB_CHANGE = rx(
    r"quit|resigned|left|retired|laid off|fired|let go|new job|new role|new position|"
    r"started (?:a|my|as|at|working|work)|start(?:s|ing)? (?:as|at)|joined|hired|"
    r"switched (?:jobs|careers|to)|changed (?:jobs|careers)|career change|promoted|"
    r"transferred|moved to (?:a|an|the) (?:\w+ ){0,3}(?:role|job|position|team|department)|"
    r"rejoined|came out of retirement|now work|now works|became|offer|accepted",
    ja="転職|退職|辞めて|辞めました|入社|就職|異動|昇進|独立|開業|経営|始めました|なりました",
)
WORK_HOURS = rx(
    r"full-?time|part-?time|(?:\d|one|two|three|four|five|six) days? a week|"
    r"(?:four|4)-day week|working hours|work hours|shifts?|hours a week|fridays off|"
    r"mondays off|compressed hours",
    ja=r"フルタイム|パートタイム|時短|週\d日|週[一二三四五六]日|勤務時間",
)

EVENT = rx(
    r"appointments?|appt|meetings?|standups?|stand-ups?|review|interview|lessons?|class|"
    r"classes|session|practice|rehearsal|exam|test|check-?up|flight|train|dinner|lunch|"
    r"party|wedding|offsite|off-site|conference|trip|holiday|vacation|honeymoon|deadline|"
    r"draft|reservation|booking|haircut|surgery|operation|procedure|scan|concert|match|"
    r"game|recital|ceremony|shift|gig|visit|tour|retreat|birthday|workshop|webinar|"
    r"presentation|talk|demo|launch|release|sprint|retro|one-on-one|1:1|call|date|"
    r"viewing|hearing|course|seminar|event|festival|show|move|due|anniversary|celebration|"
    r"getaway|reunion|weekend away|break|staycation|cruise|camp|fair|expo|summit",
    ja="予約|会議|打ち合わせ|ミーティング|面接|面談|レッスン|授業|教室|試験|テスト|検診|健診|"
    "診察|フライト|便|旅行|出張|飲み会|パーティー|結婚式|発表会|運動会|締め切り|締切|誕生日|"
    "歯医者|美容院|手術|検査|ライブ|コンサート|試合|説明会|送別会|歓迎会|同窓会|合宿|研修",
)
TIME_VALUE = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|\bweekdays?\b|\bweekends?\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b(?! to\b)"
    r"|\b\d{1,2}(?::\d\d)?\s*(?:am|pm)\b|\b\d{1,2}[:.]\d\d\b|\bnoon\b|\bmidnight\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)\b|\b(?:19|20)\d\d\b|\b\d{1,2}\b"
    r"|\b(?:morning|afternoon|evening|night|tonight|tomorrow|today)s?\b"
    r"|[月火水木金土日]曜|\d+時(?:半|\d+分)?|\d+月|\d+日|朝|昼|夜|晩|午前|午後"
)

DRUG_EXTRA = rx(
    r"ibuprofen|paracetamol|acetaminophen|aspirin|naproxen|melatonin|vitamin [a-z0-9]+|"
    r"iron|zinc|magnesium|omega-?3|fish oil|antihistamines?|cetirizine|loratadine|"
    r"sertraline|citalopram|escitalopram|fluoxetine|venlafaxine|duloxetine|mirtazapine|"
    r"amitriptyline|quetiapine|aripiprazole|risperidone|olanzapine|levothyroxine|thyroxine|"
    r"amlodipine|losartan|lisinopril|ramipril|bisoprolol|metoprolol|propranolol|"
    r"atorvastatin|simvastatin|rosuvastatin|omeprazole|lansoprazole|pantoprazole|"
    r"metformin|insulin|ozempic|semaglutide|wegovy|mounjaro|tirzepatide|prednisolone|"
    r"prednisone|hydrocortisone|montelukast|salbutamol|albuterol|ventolin|inhaler|"
    r"contraceptive|the pill|hrt|estrogen|oestrogen|testosterone|creatine|protein powder|"
    r"supplements?|pills?|tablets?|drops|injections?|patch|medication|meds|"
    r"antibiotics?|amoxicillin|doxycycline|adderall|ritalin|concerta|elvanse|vyvanse",
    ja="薬|錠|サプリ|ビタミン|インスリン|抗生物質|睡眠薬|降圧剤|目薬|漢方",
)
DRUG = (MEDICATION, DRUG_EXTRA)
DOSE = re.compile(
    r"\b\d+(?:\.\d+)?\s*(?:mg|mcg|µg|g|ml|iu|units?|tablets?|pills?|puffs?|drops|capsules?)\b"
    r"|\b(?:once|twice|three times) (?:a|per) day\b|\bdaily\b|\bnightly\b"
    r"|\d+(?:錠|mg|ミリ|粒|回)|朝晩|朝と晩|毎食"
)

# fmt: off
_POSSESSION_KIND_TERMS: tuple[tuple[str, str, str], ...] = (
    ("car", *_terms(
        r"car|cars|drive an?|drives an?|driving an?|suv|hatchback|sedan|van|pickup|truck|"
        r"electric car|estate car|minivan|station wagon",
        ja="車|クルマ|乗っています|軽自動車",
    )),
    ("phone", *_terms(
        r"phone|smartphone|mobile|android phone|flip phone",
        ja="スマホ|携帯|電話機",
    )),
    ("laptop", *_terms(
        r"laptop|notebook|computer|pc|desktop",
        ja="パソコン|pc|ノートpc",
    )),
    ("watch", *_terms(r"watch|smartwatch", ja="時計")),
    ("bike", *_terms(
        r"bike|bicycle|e-?bike|road bike|mountain bike|motorbike|motorcycle|scooter",
        ja="自転車|バイク|ロードバイク|スクーター",
    )),
    ("tablet", *_terms(r"tablet|e-?reader", ja="タブレット")),
    ("console", *_terms(
        r"console|games console|game console", ja="ゲーム機"
    )),
    ("camera", *_terms(r"camera|dslr|mirrorless", ja="カメラ|一眼")),
    ("instrument", *_terms(
        r"piano|keyboard|guitar|violin|cello|drum kit|drums|saxophone|ukulele",
        ja="ピアノ|ギター|バイオリン",
    )),
    ("tv", *_terms(r"tv|television", ja="テレビ")),
    ("storage", *_terms(
        r"external (?:hard )?drive|hard drive|ssd|nas|backups?|cloud storage",
        ja="外付け|バックアップ|ハードディスク|クラウド",
    )),
)
# fmt: on
POSSESSION_KIND, POSSESSION_KIND_PROBE = table(_POSSESSION_KIND_TERMS)
#: "phone bill", "car insurance": things about the possession, not the possession.
POSSESSION_ASPECT = re.compile(
    r"\b(?:car|phone|laptop|bike|watch|camera|tablet) (?:insurance|bill|plan|number|case|"
    r"charger|stand|bag|screen|battery|seat|park|parking|keys?|loan|service|mot|repair|"
    r"contract|cover|holder|mount|helmet|lock|lane|rack|ride|wash)"
    r"|(?:車|スマホ|携帯)の(?:保険|料金|番号|ケース|充電|修理|車検)"
)
POSSESSION_VERB = rx(
    r"have|has|own|owns|drive|drives|driving|ride|rides|use|uses|using|wear|wears|got|"
    r"bought|buy|buying|getting|sold|selling|traded|replaced|upgraded|switched|is|lost|"
    r"gave|keep|kept|carry|my|our|moved|stored|store",
    ja="持って|乗って|使って|買い|買った|購入|手放|売|替え|なくし|です",
)

# fmt: off
_PET_KIND_TERMS: tuple[tuple[str, str, str], ...] = (
    ("dog", *_terms(
        r"dogs?|pupp(?:y|ies)|pup|beagle|labrador|lab|retriever|poodle|terrier|corgi|"
        r"dachshund|shiba|husky|greyhound|spaniel|collie|pug|bulldog|shepherd|whippet|"
        r"lurcher|chihuahua|schnauzer|doodle|labradoodle|cockapoo|rottweiler|boxer|setter",
        ja="犬|いぬ|イヌ|ワンちゃん|柴|ダックス|プードル|チワワ|ポメラニアン|トイプー|レトリバー",
    )),
    ("cat", *_terms(
        r"cats?|kittens?|kitty|tabby|siamese|persian|maine coon|ragdoll", ja="猫|ねこ|ネコ|子猫"
    )),
    ("rabbit", *_terms(r"rabbits?|bunny|bunnies", ja="うさぎ|ウサギ|兎")),
    ("rodent", *_terms(
        r"hamsters?|guinea pigs?|gerbils?|rats?|mice|chinchillas?|ferrets?",
        ja="ハムスター|モルモット|フェレット",
    )),
    ("bird", *_terms(
        r"birds?|parrots?|budgies?|parakeets?|cockatiels?|canar(?:y|ies)|chickens?|hens?|"
        r"ducks?",
        ja="鳥|インコ|オウム|文鳥|鶏|にわとり|ニワトリ",
    )),
    ("fish", *_terms(r"fish|goldfish|aquarium|koi|betta|guppies", ja="金魚|熱帯魚|メダカ|魚|水槽")),
    ("reptile", *_terms(
        r"tortoises?|turtles?|lizards?|geckos?|snakes?|iguanas?|bearded dragon",
        ja="亀|カメ|トカゲ|ヘビ",
    )),
    ("horse", *_terms(r"horses?|pony|ponies", ja="馬")),
)
# fmt: on
PET_KIND, PET_KIND_PROBE = table(_PET_KIND_TERMS)
PET_OWN = rx(
    r"have|has|had|got|own|adopted|adopt|rescued|fostering|foster|our|my|named|called|"
    r"died|passed|put down|rehomed|renamed|feed|feeding|eats|walk",
    ja="飼って|飼い|飼う|うちの|死ん|亡くな|いなくな",
)

RELATIONSHIP = rx(
    r"single|dating|seeing someone|seeing (?:a|this) (?:guy|girl|man|woman)|going out with|"
    r"girlfriend|boyfriend|partner|fianc[eé]e?|engaged|married|marry|marrying|wedding|"
    r"divorced?|divorcing|separated|widowed|widow(?:er)?|broke up|split up|together for|"
    r"been together|relationship|husband|wife|spouse|ex-\w+|moved in together",
    ja=f"独身|{DATING_JA}|交際|彼氏|彼女|恋人|婚約(?!指輪)|結婚(?!指輪)|離婚|別れ|別居|夫|妻|パートナー|入籍",
)
#: Relationship status values, in order: an ordering is not implied, only difference.
# fmt: off
_REL_STATUS_TERMS: tuple[tuple[str, str, str], ...] = (
    ("divorced", *_terms(r"divorced?|divorcing|separated|broke up|split up|ex-\w+|my ex",
                    ja="離婚|別れ|別居")),
    ("engaged", *_terms(r"engaged|fianc[eé]e?|getting married|get married", ja="婚約(?!指輪)")),
    ("married", *_terms(r"married|husband|wife|spouse|newlywed", ja="結婚(?!指輪)|入籍|夫|妻")),
    ("dating", *_terms(
        r"dating|seeing|girlfriend|boyfriend|partner|going out|together|in a relationship",
        ja=f"{DATING_JA}|交際|彼氏|彼女|恋人|パートナー",
    )),
    ("single", *_terms(
        r"single|not seeing anyone|not dating", ja="独身|恋人はいない|彼氏はいない|彼女はいない"
    )),
)
# fmt: on
REL_STATUS, REL_STATUS_PROBE = table(_REL_STATUS_TERMS)
BUSINESS_PARTNER = rx(r"business partner|partner at|partners? in (?:the|a|my)|sparring partner")

HABIT_FREQUENCY = rx(
    r"every (?:day|morning|evening|night|week|weekend|month|weekday|other day|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|daily|weekly|nightly|"
    r"(?:once|twice|three times|four times|\d+ times|one \w+|two \w+) (?:a|per) (?:week|day|"
    r"month|night)|(?:a|per) (?:day|week)|most (?:days|mornings|evenings|nights|weekends)|"
    r"usually|always|habit|routine|regularly|on (?:weekdays|weekends|mondays|tuesdays|"
    r"wednesdays|thursdays|fridays|saturdays|sundays)",
    ja="毎日|毎朝|毎晩|毎週|毎月|週\\d|週[一二三四五六七]|週に|月に|日に|日課|習慣|いつも|"
    "たいてい|よく|普段",
)
COMMUTE = rx(
    r"(?:drive|drives|cycle|cycles|bike|bikes|walk|walks|run|runs|ride|rides|take the "
    r"(?:bus|train|tube|metro|subway|tram|ferry)|takes the (?:bus|train|tube|metro|subway|"
    r"tram)|commute|commutes|commuting|cycling|driving|walking|biking) (?:\w+ )?(?:to|into) "
    r"(?:work|the office|office|school|campus|uni)|commute|commuting",
    ja="通勤|通学",
)
COMMUTE_MODE = rx(
    r"drive|drives|driving|car|cycle|cycles|cycling|bike|bikes|biking|walk|walks|walking|"
    r"bus|train|tube|metro|subway|tram|ferry|run|runs|running|scooter|carpool",
    ja="車|自転車|徒歩|歩いて|バス|電車|地下鉄",
)
#: Concept groups: different words for one habit or thing, matched as one token.
# fmt: off
_CONCEPTS_TERMS: tuple[tuple[str, str, str], ...] = (
    ("#alcohol", *_terms(
        r"beers?|wine|booze|alcohol|liquor|whisky|whiskey|vodka|gin|rum|sake|cocktails?|"
        r"pints?|drinking|sober|teetotal",
        ja="お酒|酒|ビール|ワイン|飲酒|晩酌|日本酒|焼酎|ハイボール",
    )),
    ("#smoking", *_terms(
        r"smok\w*|cigarettes?|cigs|cigars?|tobacco|vap\w*|nicotine|e-cig\w*",
        ja="タバコ|たばこ|煙草|喫煙|禁煙",
    )),
    ("#coffee", *_terms(r"coffee|caffeine|espresso|lattes?|cappuccinos?|flat whites?",
                   ja="コーヒー|カフェイン")),
    ("#gym", *_terms(
        r"gym|workouts?|(?:working|work) out(?! (?:my|the|how|what|a|an|if|whether|our|"
        r"it|that|this|why|when|where|which)\b)|weights|weightlifting|lifting",
                ja="ジム|筋トレ|トレーニング")),
    ("#running", *_terms(r"run|runs|running|jog|jogs|jogging|marathons?|5k|10k",
                    ja="ランニング|ジョギング|マラソン|走")),
    ("#cycling", *_terms(r"cycl\w+|biking|bike rides?", ja="自転車|サイクリング")),
    ("#swimming", *_terms(r"swim|swims|swimming|pool", ja="水泳|プール|泳")),
    ("#yoga", *_terms(r"yoga|pilates", ja="ヨガ|ピラティス")),
    ("#meat", *_terms(r"meat|vegetarian|vegan|pescatarian|plant-based|beef|pork|chicken",
                 ja="肉|ベジタリアン|菜食|ビーガン")),
    ("#sleep", *_terms(r"bed|bedtime|sleep|asleep|wake up|get up", ja="寝|睡眠|起き")),
    ("#job", *_terms(JOB_TITLE, ja="仕事|職|勤め|働")),
    ("#move", *_terms(r"move|moving|moved|relocat\w+", ja="引っ越|引越|移住")),
)
# fmt: on
CONCEPTS, CONCEPTS_PROBE = table(_CONCEPTS_TERMS)
#: Words too common to show that two sentences talk about the same thing.
GENERIC = frozenset(
    "a an the and or but to of in on at for with from by is are was were be been being it "
    "its this that these those i me my mine we us our ours you your he she him her his they "
    "them their user users user's just so very really quite now new old still also too "
    "actually finally last next this every each all some any no not never more most less "
    "day days week weeks month months year years time times today tonight yesterday "
    "tomorrow morning evening night weekend ago since ever again back off out up down over "
    "get got have has had do does did done go goes went going gone make made take took "
    "taken use used using like liked love want need thing things way lot bit one two three "
    "four five first second can can't cannot will would could should may might must am "
    "i'm i've we're we've it's don't doesn't didn't isn't aren't wasn't about after before "
    "because around into than then there here what when where which who why how only even "
    "much many such other same own work working works job life home house family people "
    "start started stop stopped keep kept call called said say tell told feel felt think "
    "know see seen look good great nice bad right well okay ok yes yeah".split()
)
GENERIC_JA = frozenset(
    "今 最近 先月 先週 今月 今週 来月 来週 去年 今年 昨日 今日 明日 毎日 毎朝 毎晩 毎週 自分 "
    "私 僕 俺 家 時 日 月 年 週 人 方 事 物 今は 前 後 中 分 時間 一 二 三 好 始".split()
)

#: Requests to the assistant ("Please stop suggesting podcasts"): not the end of a fact.
INSTRUCTION_LIKE = rx(
    r"please|stop (?:suggesting|sending|recommending|reminding|asking|mentioning|using)|"
    r"don't (?:suggest|send|remind|recommend|mention|ask|call me)|never (?:suggest|send|"
    r"remind|recommend|mention)|remind me",
    ja="ないでください|ないで下さい|しないで|やめてください",
)
#: The user in the first person or by role: an old text that is the user's own fact.
USER_MENTION = rx(
    r"i|i'm|im|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|we'll|our|ours|us|user|"
    r"user's",
)

#: Health states: a shared slot for "can't run (ankle)" and "cleared to run again".
HEALTH = rx(
    r"diagnos\w*|prediabet\w*|pre-diabet\w*|diabet\w*|hba1c|cholesterol|blood (?:pressure|sugar)|"
    r"sprain\w*|injur\w*|broke my|fracture\w*|torn|tore|pain|ache|symptoms?|condition|"
    r"recovered|remission|physio\w*|glasses|prescription|contact lenses|vision|allerg\w*|"
    r"asthma|migraines?|eczema|anemi\w*|anaemi\w*|deficien\w*|intoleran\w*|pregnan\w*",
    ja="診断|持病|血圧|血糖|コレステロール|捻挫|骨折|怪我|けが|痛|症状|アレルギー|花粉症|喘息|"
    "治った|完治|眼鏡|メガネ|視力",
)
#: Tokens (stems) too common to tie an end marker to a particular old memory.
WEAK = frozenset(
    "drink eat play read watch see visit live drive keep wear listen cook sleep walk take do "
    "buy sell find show tell doctor dr physio allergi allergic test result finish decid "
    "realli actual anymor longer i'v we'v i'm we'r i'd anyth someth everyth thing stuff "
    "place part kind sort lot love like enjoi hate prefer want need tri use move chang "
    "switch start stop quit left gone lost cancel end sold gave back again fine well "
    "better worse bad good great big small long short high low full free open close "
    "right ok okai plan".split()
)
#: Number words: counts that change ("three chickens" -> "down to two").
COUNT = re.compile(
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a dozen|"
    r"a couple)\b(?![-‐]\w)|[0-9一二三四五六七八九十]+(?:匹|頭|羽|台|人|個|回|錠|杯|本|缶)"
)
NEW_ATTRIBUTE = re.compile(r"\b(?:my|our|user's|the user's) new ([a-z]+)(?: ([a-z]+))?")
#: A death or loss of someone close: ends the user's memories of doing things with them.
BEREAVED = rx(
    r"died|passed away|passed|is gone|has gone|put down|lost|death|funeral",
    ja="亡くな|他界|死ん|逝去",
)
#: "honeymoon fund", "wedding dress": a thing for the event, not the event itself.
EVENT_ASPECT = re.compile(
    r" (?:fund|budget|dress|suit|present|gifts?|cake|photos?|pictures?|venue|list|playlist|"
    r"money|savings|insurance|card|outfit|registry|speech|favou?rs|planning|planner)\b"
)
#: Likes and dislikes, including the ways to say a taste is gone.
PREFERENCE_SLOT = rx(
    r"prefers?|preferred|favou?rites?|love|loves|like|likes|enjoy|enjoys|hate|hates|"
    r"fan of|into|can't (?:handle|stand|do|take|tolerate|eat|drink|face)|gone off|sick of|"
    r"tired of|go-to|rather",
    ja="好き|嫌い|苦手|派|ハマって|はまって|お気に入り|推し",
)
#: A plan in an old memory: a later "not doing it after all" ends it.
PLAN_SLOT = rx(
    r"going to|planning|plan to|plans to|intend|will|booked|signed up|registered|"
    r"applying|apply|hoping to|aiming to|selling|listed",
    ja="予定|つもり|計画|申し込|予約",
)
#: Job changes that need no job word nearby: "転職しました", "got promoted".
JOB_CHANGE_STRONG = rx(
    r"promoted|resigned|new job|new role|new position|got hired|career change|changed careers|"
    r"changed jobs|switched jobs|handed in my notice",
    ja="転職|退職|入社|就職|異動|昇進|独立|開業|経営",
)
#: Identities that are a standing "no": "I'm vegetarian" denies eating meat.
ABSTAIN = rx(
    r"vegetarian|vegan|teetotal|teetotaller|sober|non-smoker|don't drink|do not drink|"
    r"caffeine-free|alcohol-free",
    ja="ベジタリアン|ビーガン|菜食|禁酒|禁煙|断酒",
)

# --- text shapes the detector reads -------------------------------------------------------

#: Openers that carry no subject ("So, update: ...").
FILLER = re.compile(
    r"^(?:(?:so|well|oh|ok|okay|update|fyi|btw|quick update|news|actually|and|but|hey|"
    r"good news|bad news|sad news|heads up|just so you know)\b[:,!—–-]?\s*)+"
)
JA_LEAD = re.compile(
    r"^(?:(?:先月|先週|今月|今週|昨日|今日|去年|昨年|今年|最近|今|実は|この前|先日|ついに|やっと|"
    r"とうとう|結局|やっぱり|残念ながら|突然|急に|[0-9]+年|[0-9]+月)[、,はにの]?)+"
)
JA_WITH = re.compile(r"と(?:は|も)?(?:付き合|別れ|結婚|婚約|仲直り|喧嘩|同棲|暮らし)|私と|僕と")
LINKERS = frozenset(
    "is are was were : on at around by due departs leaves starts begins ends called named "
    "eats drinks uses drives prefers".split()
)
FRAME_WORDS = frozenset("favourite favorite preferred current usual main latest".split())
TIME_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays "
    "thursdays fridays saturdays sundays weekday weekdays weekend weekends january february "
    "march april may june july august september october november december am pm noon "
    "morning afternoon evening night tonight tomorrow today week month next same".split()
)

#: Tokens, clauses and names as the detector splits text.
EN_TOKEN = re.compile(r"[a-z0-9]+(?:['.\-][a-z0-9]+)*")
SEQ_TOKEN = re.compile(r"[a-z0-9]+(?:['.:\-][a-z0-9]+)*|:")
CLAUSE = re.compile(r"[.;!?。!?;]|—|–| - |, (?:but|so|and|because)\b|\bbut\b|けど|が、|ので|て、")
KATAKANA = re.compile(r"[\u30a0-\u30ffー]{2,}")
KANJI = re.compile(r"[\u4e00-\u9fff々]+")
CAPITAL = re.compile(r"(?<![\w'])[A-Z][\w'&.-]*(?:\s+(?:[A-Z][\w'&.-]*|\d+))*")
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufeff]")
MID_CAPITAL = re.compile(r"(?<=[a-z0-9,'’)] )[A-Z][A-Za-z'-]+")
NAMED = re.compile(
    r"^(?P<name>[A-Z][a-z]{2,})\b(?= (?:is|was|has|had|got|gets|died|passed|moved|lives|works|"
    r"just|now|eats|went|ran|left|started|stopped|quit|turned|became|\w+ed)\b)"
)
MODEL = re.compile(r"\b[a-z]*\d+[a-z0-9]*\b|\b[a-z]+-\d+\b")
#: A restatement of ours: the user's own words are read back out of it.
ORIGINAL = re.compile(
    r'^The user\'s [^\n]{0,90}?\): "(?P<en>.*)"$|^ユーザーの[^\n]{0,60}?\): (?P<ja>.*)$'
)
RESTATED = re.compile(r"^(?:user:\s*|the user\b\s*|user\b\s*|ユーザーは)", re.I)
#: A capitalised first word that opens a subject-less note ("Sold the Civic..."), not a name.
VERB_LIKE = re.compile(r"\w+(?:ed|ing)|took|got|sold|quit|left|found|gave|made|lost|had")
WEAK_PREFIXES = frozenset(t[:5] for t in WEAK if len(t) >= 5) | {"aller"}
SPECIFIC_TIME = re.compile(r"\d|day|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|曜|時|日")
TIME_STEMS = (
    TIME_WORDS
    | frozenset(stem(w) for w in TIME_WORDS)
    | frozenset("spring summer autumn fall winter season holiday".split())
)
#: Partners: "The user's husband is Mark" is the user's own relationship.
PARTNERS = frozenset(
    "husband wife partner boyfriend girlfriend fiance fiancee fiancé fiancée spouse "
    "彼氏 彼女 夫 妻 恋人 婚約者".split()
)
