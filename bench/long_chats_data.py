"""The facts of ``long_chats.py``: templates, slot values and questions (tuning data).

Two disjoint pools per language: ``a`` (the judge's rules were tuned on it) and ``b`` (a
check: other wording, other values; not held out in the strict sense). Per kind a header
``kind: slot slot=list > changing ? question`` (a slot draws from its own value list or the
one after ``=``; a change replaces the slots after ``>``, all by default; pool ``a`` holds
the question) and its forms, one tag a line: ``w`` the fact wrapped in a request for help,
``p`` a plain statement, ``c`` a later turn with a new value (``{old_x}``: the earlier one).
Templates sharing a line are separated by `` | ``; an indented line continues the one above.
"""

from __future__ import annotations

_FORMS = {"w": "wrapped", "p": "plain", "c": "changed"}


def block_lines(block: str) -> list[str]:
    """Lines of a block, indented continuations joined to the line above."""
    lines: list[str] = []
    for raw in block.strip("\n").splitlines():
        if raw[:1].isspace() and lines:
            lines[-1] += " " + raw.strip()
        elif raw.strip():
            lines.append(raw.strip())
    return lines


def templates(text: str) -> list[str]:
    return [t.strip() for t in text.split(" | ") if t.strip()]


def _facts(block: str) -> dict[str, dict]:
    facts: dict[str, dict] = {}
    current: dict = {}
    for line in block_lines(block):
        tag, _, rest = line.partition(" ")
        if tag.endswith(":"):
            rest, _, question = rest.partition(" ? ")
            slots, _, changes = rest.partition(">")
            current = {"slots": slots.split(), "changes": changes.split(), "question": question}
            current |= {form: [] for form in _FORMS.values()}
            facts[tag[:-1]] = current
        else:
            current[_FORMS[tag]] += templates(rest)
    return facts


def _values(block: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in block_lines(block):
        name, _, rest = line.partition(": ")
        out[name] = [v.strip() for v in rest.split(";") if v.strip()]
    return out


# --- facts and their values -------------------------------------------------------------------

EN_A = _facts(
    """
home: city ? Where do I live now?
w What are some good hiking trails near {city}? I moved there in the spring.
w I live in {city}, so which day trips would you suggest for a free Saturday?
w Can you list a few farmers markets in {city}, where I live?
p I live in {city}. | Home for me is {city}.
c We finally moved from {old_city} to {city} last week. Can you help me write a
  change-of-address checklist?
c Quick update, I don't live in {old_city} anymore, I'm in {city} now. Any decent bike shops?
job: role employer ? Where do I work, and what is my role?
w I work as a {role} at {employer} - can you help me write a polite out-of-office message?
w Help me prepare for my annual review; I'm a {role} at {employer}.
w As a {role} at {employer}, which certifications would actually help my career?
p I'm a {role} at {employer}. | I work at {employer} as a {role}.
c I left {old_employer} and started as a {role} at {employer} on Monday! Tips for the first
  week?
c New job: {role} at {employer}. Can you help me update the summary on my resume?
car: car ? What car do I drive?
w How often should I rotate the tires on my {car}?
w What's a fair price for new brake pads on a {car}? That's what I drive.
p I drive a {car}.
c I sold the {old_car} and bought a {car}. What maintenance matters in the first year?
c Traded in my {old_car} for a {car} this weekend - how do I pair my phone with it?
commute: mode ? How do I get to work?
w I commute {mode} every day, any podcasts around 30 minutes long?
w What should I keep in my bag for the commute? I go {mode}.
p I get to work {mode}.
c I changed my commute, I go {mode} now instead of {old_mode}. How do I stay dry when it rains?
gym: gym ? Which gym do I go to?
w Can you make me a 45-minute workout? I train at {gym}, they have free weights and rowers.
w I go to {gym} three times a week, how should I split my workouts?
p I'm a member at {gym}.
c I cancelled my membership at {old_gym} and joined {gym}. Can you adjust my workout plan?
medication: drug dose > dose ? What dose of {drug} do I take?
w I take {dose} of {drug} every morning; is grapefruit juice okay with that?
w Which side effects should I watch for with {drug}? I'm on {dose} a day.
w Make me a printable medication chart: {drug}, {dose}, once daily.
p I'm on {dose} of {drug} daily.
c My doctor changed my {drug} from {old_dose} to {dose}. Should I take it at a different time?
c Heads up, my {drug} dose changed to {dose} (it was {old_dose}); can you update my chart?
event: what date > date ? When is my {what}?
w My {what} is on {date}; can you tell me what to prepare?
w Help me plan the week around my {what} on {date}.
w What should I wear to my {what}? It's on {date}.
p My {what} is on {date}. | Note: {what} on {date}.
c My {what} got moved from {old_date} to {date}. Can you redo my weekly schedule?
c The {what} is now on {date}, not {old_date}. Remind me what I need to bring?
rent: rent ? How much rent do I pay?
w My rent is {rent} a month; can you help me build a budget on a take-home of $3,900?
w Is {rent} a month fair for a one-bedroom? That's what I pay.
p I pay {rent} a month in rent.
c Our landlord is changing the rent from {old_rent} to {rent}. Can you draft a polite reply?
project: project ? Which project am I working on?
w I'm leading {project} at work - can you help me write a kickoff agenda?
w Write a status update for {project}, the project I run: we're two weeks behind on testing.
p I'm the lead on {project}.
c I was moved off {old_project}; I'm on {project} now. Can you help me write a handover note?
device: device ? Which device do I use?
w How do I take a screenshot on my {device}?
w My {device} battery drains fast, which settings should I change?
p My laptop is a {device}.
c Got a new laptop, a {device} (retired the old {old_device}). How do I move my files over?
pet: species petname ? What is my {species} called?
w My {species} {petname} keeps chewing cables, how do I stop that?
w What's a healthy treat I could give {petname}, my {species}?
p I have a {species} named {petname}.
partner: pname=person ? What is my partner's name?
w Help me plan a surprise dinner for my partner {pname}.
w What's a thoughtful anniversary gift? My partner {pname} loves gardening.
p My partner's name is {pname}.
kid: kname=person age ? How old is {kname}?
w My son {kname} is {age} and struggles with fractions, can you suggest a game?
w Suggest some birthday party themes for my daughter {kname}, she's turning {age}.
p I have a {age}-year-old, {kname}.
sibling: rel sname=person scity=city ? Where does my {rel} {sname} live?
w Write a birthday message for my {rel} {sname}, who lives in {scity}.
w What's the cheapest way to ship a parcel to {scity}? It's for my {rel} {sname}.
p My {rel} {sname} lives in {scity}.
allergy: allergen ? What am I allergic to?
w Suggest a weeknight dinner without {allergen}, I'm allergic.
w I'm allergic to {allergen} - what should I tell the waiter at a restaurant?
p I'm allergic to {allergen}.
diet: diet ? What diet do I follow?
w I've been {diet} for two years, can you give me five easy lunches?
w Plan a dinner party menu that works for me, I'm {diet}.
p I'm {diet}.
hobby: hobby ? What is my hobby?
w I've been doing {hobby} on weekends, how can I get better without a coach?
w Can you recommend gear for {hobby}? I took it up last year.
p My hobby is {hobby}.
language: lang ? Which language am I learning?
w I'm learning {lang} - can you give me ten phrases for ordering food?
w Which apps are good for {lang}? I study it every evening.
p I'm studying {lang}.
school: degree ? What am I studying?
w I'm doing {degree} part-time; how do I balance it with a full-time job?
w Help me outline a study plan; I'm doing {degree} and exams are in May.
p I'm enrolled in {degree}.
birthday: bday=date ? When is my birthday?
w My birthday is {bday} - can you suggest a small dinner party menu?
w I turn 35 on {bday}; what's a fun way to celebrate on a budget?
p My birthday is on {bday}.
landlord: lname=surname unit ? What is my landlord's name?
w Write an email to my landlord, {lname}, about the broken heater in apartment {unit}.
w How do I remind {lname}, my landlord, that the lock in unit {unit} still sticks?
p My landlord is {lname}; I'm in apartment {unit}.
boss: bname=person ? What is my manager's name?
w How do I ask my manager {bname} for Friday off?
w Draft a thank-you note to {bname}, my boss, for the flexible hours.
p My manager is {bname}.
friend: fname=person ? Who is my best friend?
w My best friend {fname} just had knee surgery; what should I write in a card?
w Suggest a gift for {fname}, my oldest friend, who is into board games.
p My best friend is {fname}.
hometown: town ? Where did I grow up?
w I grew up in {town}; can you write a short poem about small-town summers there?
w What's the history of {town}? It's where I was born.
p I'm originally from {town}.
savings: amount goal ? What am I saving for, and how much?
w I'm saving {amount} for {goal}, how much should I put aside each month over two years?
w Help me find ways to cut spending, I need {amount} for {goal}.
p I'm saving {amount} for {goal}.
instrument: instrument ? Which instrument do I play?
w I've played the {instrument} for six years; which pieces would challenge me?
w How do I keep my {instrument} in good shape through a humid summer?
p I play the {instrument}.
doctor: dname=surname ? Who is my doctor?
w Help me write questions for my GP, Dr. {dname}, about my knee pain.
w How do I ask Dr. {dname}, my doctor, for a referral?
p My doctor is Dr. {dname}.
"""
)
EN_A_VALUES = _values(
    """
city: Denver; Leeds; Porto; Halifax; Tucson; Ghent; Adelaide; Raleigh; Bergen; Valencia; Boise;
  Malmo; Wellington; Pittsburgh; Lyon
role: nurse; data analyst; paralegal; sous-chef; UX designer; electrician; pharmacist;
  high-school teacher; site engineer
employer: Halvorsen Logistics; Brightwater Clinic; Meridian Bank; Copperleaf Foods; Northgate Labs;
  Tidewell Insurance; Orchard Systems
car: Subaru Outback; Honda Fit; Kia Niro; Mazda 3; Volkswagen Golf; Toyota RAV4; Ford Focus
mode: by bike; on the 7:40 train; by bus; in a carpool; on an e-scooter; on foot
gym: Ironworks Gym; the YMCA on Pine Street; Summit Climbing; Harbor CrossFit; Peak Fitness
drug: sertraline; levothyroxine; lisinopril; metformin; atorvastatin; escitalopram
dose: 25 mg; 50 mg; 100 mg; 75 mg; 10 mg; 20 mg; 500 mg
what: dentist appointment; sister's wedding; job interview; MRI scan; flight to Lisbon;
  parent-teacher meeting; half marathon; driving test; visa appointment; thesis defense
date: March 14; April 22; June 3; October 9; November 18; February 27; August 5; the 12th of July;
  September 30; January 8
rent: $1,450; $1,820; $2,100; $1,275; $960; $1,640
project: the Atlas migration; Project Juniper; the billing rewrite; the Helios launch;
  the data warehouse rebuild
device: ThinkPad X1 Carbon; MacBook Air; Dell XPS 13; Framework 13; Surface Laptop 5
species: beagle; tabby cat; rabbit; border collie; parrot
petname: Biscuit; Miso; Pepper; Juno; Waffles; Ziggy
person: Laura; Marcus; Priya; Tomas; Aisha; Ben; Elena; Kofi; Hana; Diego; Ruth; Omar
surname: Patel; Novak; Okafor; Lindqvist; Moreau; Hughes
age: 6; 8; 9; 11; 13
rel: brother; sister
allergen: shellfish; peanuts; sesame; kiwi; tree nuts
diet: vegetarian; pescatarian; gluten-free; vegan
hobby: bouldering; pottery; sourdough baking; birdwatching; trail running
lang: Portuguese; Korean; Dutch; Italian
degree: an MBA at Rutgers; a nursing degree at Deakin; a data science certificate at UCLA
unit: 4B; 12C; 7; 21A
town: Bathurst; Keswick; Truro; Durango; Elgin
amount: $12,000; $8,500; $20,000; $5,000
goal: a house deposit; a trip to Japan; a used car; my wedding
instrument: cello; trumpet; piano; violin
"""
)

EN_B = _facts(
    """
home: city
w Since I'm based in {city}, what's the cheapest way to get to the airport from downtown?
w Recommend a couple of quiet cafes in {city}? I've lived here about a year.
p I'm based in {city}. | We live in {city}.
c Packing is done, we relocated from {old_city} to {city}. What utilities do I need to set up?
c Now that home is {city} rather than {old_city}, which running clubs are worth joining?
job: role employer
w Could you tidy up my email signature? {role}, {employer} - that's my job.
w I'm employed at {employer} as a {role}; how do I negotiate a raise next quarter?
p I'm employed by {employer} as a {role}. | Day job: {role} at {employer}.
c Resigned from {old_employer} - as of this month I'm a {role} at {employer}. Any onboarding
  advice?
car: car
w What tire pressure should a {car} run in winter? It's my car.
w The check-engine light on my {car} came on, what are common causes?
p My car is a {car}.
c We replaced the old {old_car} with a {car}; does it need a special oil?
commute: mode
w Any tips to make my daily commute {mode} less boring? It's 40 minutes each way.
p My commute is {mode}.
c No more {old_mode} for me, I now commute {mode}. What gear should I get?
gym: gym
w Write me a beginner routine for {gym}, that's where I work out.
p I work out at {gym}.
c Switched gyms from {old_gym} to {gym}, they have a pool - can you add swimming to my plan?
medication: drug dose > dose
w Can I drink alcohol on {drug}? I've been taking {dose} nightly.
w Set up a reminder schedule for my {drug}, {dose} with breakfast.
p I take {drug}, {dose} a day.
c The pharmacist says my {drug} is {dose} now instead of {old_dose}. Does that change anything?
event: what date > date
w Can you build me a checklist for my {what}? It's {date}.
w I've got my {what} on {date}, how early should I start getting ready?
p {what} booked for {date}.
c They rescheduled my {what} to {date} (was {old_date}); please fix my plan.
rent: rent
w We pay {rent} in rent each month - is renting still smarter than buying for us?
p Our rent is {rent} per month.
c From next month our rent is {rent} (used to be {old_rent}); can we still afford a car?
project: project
w Summarize the risks for {project}; my team owns it and the deadline is tight.
p At work I run {project}.
c My team handed {old_project} to another group and gave us {project}. What should I ask first?
device: device
w What's the best way to back up my {device} to the cloud?
p I use a {device}.
c My {old_device} died so I'm on a {device} now; how do I set up dual monitors?
pet: species petname
w Is it normal that {petname} sleeps all afternoon? She's my {species}, four years old.
p We've got a {species}, {petname}.
partner: pname=person
w Recommend a weekend getaway for me and my husband {pname}, we like quiet places.
p I'm married to {pname}.
kid: kname=person age
w What chores are right for a {age}-year-old? Asking for my kid {kname}.
p {kname}, my youngest, is {age}.
sibling: rel sname=person scity=city
w Help me plan a visit to my {rel} {sname} in {scity}, what should we do there?
p My {rel} {sname} is in {scity}.
allergy: allergen
w Which snacks are safe for someone with a {allergen} allergy like mine?
p {allergen} allergy - carry an EpiPen.
diet: diet
w Give me a week of {diet} breakfasts, that's my diet now.
p I eat {diet}.
hobby: hobby
w How do I find a {hobby} club near me? I've been into it for a while.
p Weekends are for {hobby}.
language: lang
w Correct my {lang} homework? I'm in an evening class.
p I take {lang} lessons.
school: degree
w Help me pick electives for {degree}, which I started in January.
p I'm a student in {degree}.
birthday: bday=date
w What cake should I order for my own birthday on {bday}?
p Born on {bday}.
landlord: lname=surname unit
w Draft a complaint to {lname}, our landlord, about the leak in flat {unit}.
p Flat {unit}, landlord {lname}.
boss: bname=person
w Write a message to {bname} (she's my supervisor) saying I'll be late Monday.
p I report to {bname}.
friend: fname=person
w What do I get {fname}, my closest friend since school, for her 40th?
p {fname} is my closest friend.
hometown: town
w Write a toast for my high-school reunion back home in {town}.
p I was raised in {town}.
savings: amount goal
w Open a savings plan for me? Target {amount} for {goal} by next summer.
p Savings goal: {amount} for {goal}.
instrument: instrument
w Suggest some warm-up exercises for {instrument}; I practise daily.
p I've played {instrument} since I was a kid.
doctor: dname=surname
w Dr. {dname} is my physician; how should I prepare for my yearly check-up with her?
p I see Dr. {dname}.
"""
)
EN_B_VALUES = _values(
    """
city: Sacramento; Bristol; Aarhus; Ottawa; Hobart; Leipzig; Savannah; Cork; Nagoya; Bilbao; Spokane;
  Utrecht; Perth; Madison; Graz
role: physiotherapist; QA engineer; dental hygienist; line cook; product manager; plumber;
  librarian; social worker; civil engineer
employer: Kestrel Freight; Bluepine Health; Ashford Credit Union; Greystone Bakery;
  Vantage Robotics; Riverside Council; Lumen Games
car: Hyundai Ioniq; Nissan Leaf; Skoda Octavia; Jeep Wrangler; Volvo XC40; Tesla Model 3
mode: by tram; on the 8:15 ferry; by motorbike; by car; on a folding bike; by subway
gym: Granite Strength; the community rec center; Boulder Barn; Riverside Aquatics; FitHub
drug: amlodipine; fluoxetine; losartan; omeprazole; bupropion; rosuvastatin
dose: 5 mg; 40 mg; 150 mg; 30 mg; 2.5 mg; 300 mg; 200 mg
what: root canal; brother's graduation; citizenship interview; colonoscopy; train to Edinburgh;
  court hearing; bar exam; kidney scan; piano recital; closing on the house
date: May 2; July 19; December 4; January 23; March 30; September 11; the 6th of June; October 28;
  April 15; August 21
rent: $2,350; $1,190; $1,560; $875; $2,700; $1,330
project: the Orion dashboard; Project Nightjar; the payments API; the CRM cleanup;
  the mobile app relaunch
device: Pixel 8; iPhone 13 mini; Galaxy S23; iPad Pro; Chromebook Plus
species: greyhound; guinea pig; Maine Coon; corgi; tortoise
petname: Pickle; Nori; Bruno; Olive; Toffee; Mochi
person: Grace; Henrik; Nadia; Samuel; Yuki; Felix; Amara; Lucas; Ines; Tariq; Zoe; Ivan
surname: Fischer; Adeyemi; Kowalski; Brennan; Sato; Duarte
age: 5; 7; 10; 12; 14
rel: brother; sister
allergen: egg; soy; mustard; wheat; fish
diet: low-FODMAP; keto; dairy-free; halal
hobby: woodworking; salsa dancing; astrophotography; chess; kayaking
lang: Japanese; Swahili; Greek; Turkish
degree: a master's in public health at Emory; an accounting diploma at Seneca;
  a law degree at King's College
unit: 2F; 9; 15B; 3A
town: Mildura; Penzance; Sitka; Kalamata; Oamaru
amount: $15,000; $6,000; $30,000; $9,200
goal: a camper van; grad school; an engagement ring; a new roof
instrument: saxophone; harp; drums; viola
"""
)

JA_A = _facts(
    """
home: city ? 私は今どこに住んでいますか？
w {city}に住んでいるんですが、週末に行ける日帰り温泉を教えてください。
w {city}在住です。子連れで行ける公園はありますか？
p {city}に住んでいます。
c {old_city}から{city}に引っ越しました。転入届に必要なものを教えて。
c 先月{city}へ引っ越したので（前は{old_city}）、近くのスーパーを調べてもらえますか。
job: role employer ? 私の勤務先と職種は？
w {employer}で{role}として働いています。自己紹介文を書いてもらえますか？
w {role}をしているんですが（勤務先は{employer}）、おすすめの資格はありますか？
p {employer}の{role}です。
c {old_employer}を辞めて、今月から{employer}で{role}をしています。初日の挨拶文を考えて。
car: car ? 私の車は何ですか？
w {car}に乗っています。冬用タイヤはいつ替えるべき？
p 車は{car}です。
c {old_car}を手放して{car}を買いました。最初の点検はいつがいい？
commute: mode ? 私の通勤手段は？
w 毎日{mode}で通勤しています。通勤中に聴けるポッドキャストを教えて。
p 通勤は{mode}です。
c 通勤を{old_mode}から{mode}に変えました。雨の日の対策は？
medication: drug dose > dose ? {drug}の服用量は？
w 毎朝{drug}を{dose}飲んでいます。グレープフルーツは避けたほうがいい？
p {drug}を{dose}服用中です。
c {drug}が{old_dose}から{dose}に変わりました。飲む時間は変えたほうがいいですか？
event: what date > date ? {what}はいつですか？
w {date}に{what}があります。準備することをリストにしてください。
w {what}が{date}なので、その週の予定を組んでもらえますか。
p {what}は{date}です。
c {what}が{old_date}から{date}に変更になりました。スケジュールを直してください。
rent: rent ? 家賃はいくらですか？
w 家賃が月{rent}なんですが、手取り25万円で家計簿を作ってもらえますか？
p 家賃は月{rent}です。
c 家賃が{old_rent}から{rent}に変わると連絡がありました。交渉のメール文を考えて。
project: project ? 私が担当しているプロジェクトは？
w 会社で{project}を担当しています。キックオフの議題を考えてください。
p 仕事では{project}の担当です。
c {old_project}から外れて、今は{project}の担当になりました。引き継ぎメモを書いて。
pet: species petname ? 私の{species}の名前は？
w うちの{species}の{petname}がケーブルをかじります。やめさせる方法は？
p {species}の{petname}を飼っています。
partner: pname=person ? 配偶者の名前は？
w 妻の{pname}の誕生日にサプライズをしたいです。アイデアをください。
p 妻の名前は{pname}です。
kid: kname=person age ? {kname}は何歳ですか？
w {age}歳の息子の{kname}が算数を嫌がります。楽しく学べるゲームはありますか？
p 息子の{kname}は{age}歳です。
sibling: rel sname=person scity=city ? {rel}の{sname}はどこに住んでいますか？
w {scity}に住んでいる{rel}の{sname}に荷物を送りたいです。一番安い方法は？
p {rel}の{sname}は{scity}に住んでいます。
allergy: allergen ? 私のアレルギーは？
w {allergen}アレルギーがあるので、{allergen}を使わない夕飯のレシピを教えて。
p {allergen}アレルギーです。
hobby: hobby ? 私の趣味は？
w 週末に{hobby}をしています。上達するコツはありますか？
p 趣味は{hobby}です。
language: lang ? 私が勉強している言語は？
w {lang}を勉強中です。レストランで使えるフレーズを10個教えて。
p {lang}を習っています。
birthday: bday=date ? 私の誕生日は？
w {bday}が私の誕生日なので、少人数のパーティーの献立を考えて。
p 誕生日は{bday}です。
boss: bname=surname ? 私の上司の名前は？
w 上司の{bname}さんに金曜の休みをお願いするメールを書いてください。
p 上司は{bname}さんです。
diet: diet ? 私の食事制限は？
w {diet}を続けているので、一週間分の作り置きレシピを考えてください。
p {diet}をしています。
friend: fname=person ? 私の親友は誰ですか？
w 親友の{fname}が手術を受けました。お見舞いのカードに何を書けばいい？
p 一番の友達は{fname}です。
school: degree ? 私は何を学んでいますか？
w 働きながら{degree}に通っています。両立のコツを教えて。
p {degree}の学生です。
hometown: town ? 私の出身地は？
w 地元の{town}について短い詩を書いてもらえますか？
p 出身は{town}です。
savings: amount goal ? 何のためにいくら貯金していますか？
w {goal}のために{amount}貯めたいです。毎月いくら積み立てればいい？
p {goal}に向けて{amount}を貯金中です。
"""
)
JA_A_VALUES = _values(
    """
city: 札幌; 仙台; 金沢; 福岡; 松本; 高松; 那覇; 静岡; 盛岡; 広島
role: 看護師; 経理; 保育士; システムエンジニア; 薬剤師; 営業
employer: 北斗物流; みなと総合病院; さくら銀行; 青葉食品; 東雲ソフト
car: プリウス; フィット; ジムニー; ノート; デミオ
mode: 自転車; 電車; バス; 車; 徒歩
drug: ロキソプロフェン; レボチロキシン; メトホルミン; アムロジピン
dose: 5mg; 10mg; 25mg; 50mg; 100mg
what: 歯医者の予約; 姉の結婚式; 転職の面接; 健康診断; 運転免許の更新; 引っ越しの見積もり;
  子どもの運動会; TOEICの試験
date: 3月14日; 4月22日; 6月3日; 10月9日; 11月18日; 2月27日; 8月5日; 7月12日
rent: 7万2千円; 8万5千円; 6万円; 9万8千円; 11万円
project: 物流システムの移行; 新人研修の刷新; 会計ソフトの導入; 店舗アプリの開発
species: 柴犬; 三毛猫; うさぎ; インコ
petname: こむぎ; ぽち; きなこ; もも; たろう
person: 美咲; 健太; 陽子; 翔; 由美; 大輔; 彩; 拓也
surname: 佐藤; 高橋; 中村; 小林; 山本
age: 5; 7; 9; 11
rel: 兄; 姉; 弟; 妹
allergen: えび; そば; 卵; 小麦; ピーナッツ
hobby: ボルダリング; 陶芸; 釣り; 将棋; 家庭菜園
lang: 韓国語; スペイン語; 英会話; フランス語
diet: 糖質制限; ベジタリアン; 減塩食; グルテンフリー
degree: 夜間の大学院; 看護学校; 通信制大学; 調理師専門学校
town: 尾道; 弘前; 倉敷; 函館; 高山
amount: 100万円; 50万円; 200万円; 30万円
goal: 住宅の頭金; 結婚式; 留学; 車の買い替え
"""
)

JA_B = _facts(
    """
home: city
w 今は{city}暮らしです。この辺で評判のいい歯医者の探し方を教えてください。
p {city}で暮らしています。
c {city}に転居しました（{old_city}からです）。住所変更の手続きを一覧にして。
job: role employer
w 職場は{employer}、仕事は{role}です。来期の目標の書き方を手伝ってもらえますか。
p {role}として{employer}に勤めています。
c {old_employer}から{employer}に転職して、{role}になりました。職務経歴書を更新したい。
car: car
w 愛車の{car}の燃費を良くする運転のコツは？
p {car}を持っています。
c 車を{old_car}から{car}に買い替えたので、保険の見直しポイントを教えて。
commute: mode
w {mode}通勤で片道50分かかります。時間を有効に使う方法は？
p {mode}で会社に通っています。
c この春から{mode}通勤になりました（以前は{old_mode}）。必要な持ち物は？
medication: drug dose > dose
w {drug}（{dose}）を寝る前に飲んでいますが、お酒は大丈夫？
p 毎日{drug}を{dose}飲んでいます。
c 先生に言われて{drug}を{dose}に変えました（前は{old_dose}）。注意点は？
event: what date > date
w {what}を{date}に控えています。持ち物チェックリストを作って。
p {date}は{what}。
c {what}の日程が{date}にずれました（元は{old_date}）。準備の計画を立て直して。
rent: rent
w 月{rent}の家賃を払っていますが、持ち家と比べてどちらが得か計算して。
p うちの家賃は{rent}。
c 更新で家賃が{rent}になりました（これまで{old_rent}）。節約案を出して。
project: project
w {project}のリーダーをしています。進捗報告のテンプレートを作って。
p {project}を任されています。
c 担当が{old_project}から{project}に変わりました。最初の一週間でやることは？
pet: species petname
w {petname}（うちの{species}）が最近あまり食べません。考えられる原因は？
p {petname}という{species}がいます。
partner: pname=person
w 夫の{pname}と行く週末旅行の候補を3つ挙げて。
p 夫は{pname}です。
kid: kname=person age
w 娘の{kname}が{age}歳になります。誕生日会のテーマを考えて。
p 娘の{kname}は{age}歳。
sibling: rel sname=person scity=city
w {rel}の{sname}に会いに{scity}へ行きます。現地でのおすすめは？
p {rel}の{sname}は{scity}在住です。
allergy: allergen
w 私は{allergen}が食べられない体質です。外食で気をつけることは？
p {allergen}にアレルギーがあります。
hobby: hobby
w {hobby}にハマっています。初心者向けの道具を教えて。
p 休日は{hobby}をしています。
language: lang
w オンラインで{lang}を習っています。宿題の添削をお願いできますか。
p {lang}を学んでいます。
birthday: bday=date
w 自分の誕生日（{bday}）に一人で楽しめる過ごし方を提案して。
p {bday}生まれです。
boss: bname=surname
w 課長の{bname}さんへの退職の相談メールを丁寧に書いて。
p 直属の上司は{bname}課長です。
diet: diet
w 最近{diet}を始めました。コンビニで買えるものを教えて。
p 食事は{diet}です。
friend: fname=person
w 幼なじみの{fname}の結婚式のスピーチを考えてほしいです。
p {fname}とは小学校からの親友です。
school: degree
w {degree}で学んでいます。レポートの構成を見てもらえますか？
p 今は{degree}に在籍中です。
hometown: town
w 生まれ育った{town}の同窓会でのスピーチを考えて。
p {town}の生まれです。
savings: amount goal
w {goal}用に{amount}を2年で貯めるプランを作ってください。
p {goal}の資金として{amount}を目標に貯めています。
"""
)
JA_B_VALUES = _values(
    """
city: 横浜; 京都; 新潟; 熊本; 長野; 岡山; 旭川; 浜松; 鹿児島; 宇都宮
role: 理学療法士; 品質管理; 図書館司書; 調理師; 設計士; 人事
employer: 大和精機; 青空クリニック; 若葉信用金庫; 南風製菓; 光輪システムズ
car: アクア; N-BOX; ハリアー; スイフト; セレナ
mode: 地下鉄; バイク; 路面電車; 自家用車; 高速バス
drug: オメプラゾール; ロサルタン; フルボキサミン; アトルバスタチン
dose: 2.5mg; 20mg; 40mg; 75mg; 150mg
what: 親知らずの抜歯; 弟の卒業式; 資格試験; 胃カメラ; 車検; 保護者面談; マラソン大会; 引き渡し
date: 5月2日; 7月19日; 12月4日; 1月23日; 3月30日; 9月11日; 6月6日; 10月28日
rent: 5万8千円; 12万円; 7万9千円; 10万5千円; 6万4千円
project: 在庫管理の刷新; 採用サイトの改修; 新店舗の立ち上げ; 社内ポータルの移行
species: ゴールデンレトリバー; 黒猫; ハムスター; 文鳥
petname: まる; そら; ごま; あずき; はな
person: 直樹; 真由美; 亮; 恵; 悠斗; 千尋; 浩二; 桜
surname: 田中; 伊藤; 渡辺; 加藤; 吉田
age: 4; 6; 8; 10
rel: 兄; 姉; 弟; 妹
allergen: 牛乳; 大豆; かに; くるみ; キウイ
hobby: サーフィン; 書道; キャンプ; 囲碁; カメラ
lang: 中国語; ドイツ語; イタリア語; タイ語
diet: ヴィーガン; 低脂肪食; ケトジェニック; 乳製品抜き
degree: 社会人向けのMBA; 美容専門学校; 放送大学; 法科大学院
town: 津和野; 角館; 萩; 小樽; 飛騨
amount: 80万円; 150万円; 40万円; 300万円
goal: マイホーム; 独立開業; 子どもの学費; 世界一周
"""
)

#: Kinds whose question asks when (LoCoMo's temporal category).
DATED = frozenset({"event", "birthday"})

FACTS = {"en": {"a": EN_A, "b": EN_B}, "ja": {"a": JA_A, "b": JA_B}}
QUESTIONS = {lang: {k: f["question"] for k, f in FACTS[lang]["a"].items()} for lang in FACTS}
VALUES = {"en": {"a": EN_A_VALUES, "b": EN_B_VALUES}, "ja": {"a": JA_A_VALUES, "b": JA_B_VALUES}}
