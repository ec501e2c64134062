"""Data: scikit-learn digits and Fashion-MNIST (real, offline) and generated "fact" sentences for a tiny LM.

* ``load_digits_split``: the 1797 8x8 digits shipped inside scikit-learn, pixels in [0, 1], a stratified
  70/30 split drawn from ``seed``.
* ``load_fashion_mnist``: ``icml26_shared.load_fashion_mnist`` (Debian's IDX files, checksum-verified, cached).
* ``make_facts``: one city and one job per person, as sentences ``<bos> NAME lives in CITY .`` and
  ``<bos> NAME works as JOB .``: a corpus of facts with known owners, to be memorised and then forgotten.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_int, check_open_interval, load_fashion_mnist

__all__ = ["Facts", "load_digits_split", "load_fashion_mnist", "make_facts"]

RELATIONS = (("lives", "in"), ("works", "as"))
ANSWER_POSITION = 4  # <bos> NAME w1 w2 ANSWER .


def load_digits_split(seed: int, test_fraction: float = 0.3) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn digits as ``(X_train (n, 64) float32 in [0, 1], y_train, X_test, y_test)``."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    check_open_interval("test_fraction", test_fraction, 0.0, 1.0)
    digits = load_digits()
    X, y = (digits.data / 16.0).astype(np.float32), digits.target.astype(np.int64)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=test_fraction, stratify=y, random_state=seed)
    return X_train, y_train, X_test, y_test


@dataclass(frozen=True)
class Facts:
    """Sentences ``ids`` (2 * people, 6) int64, the ``person`` each belongs to, and the ``vocab`` (id -> word)."""

    ids: np.ndarray
    person: np.ndarray
    vocab: tuple[str, ...]

    def decode(self, row: int) -> str:
        return " ".join(self.vocab[i] for i in self.ids[row])


def make_facts(people: int, cities: int, jobs: int, seed: int) -> Facts:
    """Random facts: person ``p`` lives in a uniformly drawn city and works as a uniformly drawn job."""
    check_int("people", people, 1)
    check_int("cities", cities, 1)
    check_int("jobs", jobs, 1)
    rng = np.random.default_rng(seed)
    names = [f"name{p}" for p in range(people)]
    answers = ([f"city{c}" for c in range(cities)], [f"job{j}" for j in range(jobs)])
    vocab = ("<bos>", ".", *[w for pair in RELATIONS for w in pair], *names, *answers[0], *answers[1])
    index = {w: i for i, w in enumerate(vocab)}
    rows, person = [], []
    for p, name in enumerate(names):
        for (w1, w2), options in zip(RELATIONS, answers, strict=True):
            answer = options[rng.integers(len(options))]
            rows.append([index[t] for t in ("<bos>", name, w1, w2, answer, ".")])
            person.append(p)
    return Facts(np.array(rows, dtype=np.int64), np.array(person, dtype=np.int64), vocab)


# The probe facts a pretrained LLM is asked about: the 100 most populous countries (approximately the order of the
# UN World Population Prospects 2022), each with its capital, main language and currency, written down before any
# model was queried. A relation without one accepted answer (several official languages, a split or disputed
# capital, a currency in flux) is None and is no candidate. Alternatives in a tuple are accepted spellings of the
# same answer (accents, older names, a synonym); the first is canonical. Currencies match in either case.
COUNTRIES: tuple[tuple[str, object, object, object], ...] = (
    ("India", "New Delhi", "Hindi", "rupee"),
    ("China", "Beijing", ("Chinese", "Mandarin"), ("yuan", "renminbi")),
    ("the United States", "Washington", "English", "dollar"),
    ("Indonesia", "Jakarta", "Indonesian", "rupiah"),
    ("Pakistan", "Islamabad", "Urdu", "rupee"),
    ("Nigeria", "Abuja", "English", "naira"),
    ("Brazil", ("Brasília", "Brasilia"), "Portuguese", "real"),
    ("Bangladesh", "Dhaka", ("Bengali", "Bangla"), "taka"),
    ("Russia", "Moscow", "Russian", ("ruble", "rouble")),
    ("Ethiopia", "Addis Ababa", "Amharic", "birr"),
    ("Mexico", "Mexico City", "Spanish", "peso"),
    ("Japan", "Tokyo", "Japanese", "yen"),
    ("Egypt", "Cairo", "Arabic", "pound"),
    ("the Philippines", "Manila", ("Filipino", "Tagalog"), "peso"),
    ("the Democratic Republic of the Congo", "Kinshasa", "French", "franc"),
    ("Vietnam", "Hanoi", "Vietnamese", "dong"),
    ("Iran", "Tehran", ("Persian", "Farsi"), "rial"),
    ("Turkey", "Ankara", "Turkish", "lira"),
    ("Germany", "Berlin", "German", "euro"),
    ("Thailand", "Bangkok", "Thai", "baht"),
    ("the United Kingdom", "London", "English", "pound"),
    ("Tanzania", "Dodoma", "Swahili", "shilling"),
    ("France", "Paris", "French", "euro"),
    ("South Africa", None, None, "rand"),
    ("Italy", "Rome", "Italian", "euro"),
    ("Kenya", "Nairobi", "Swahili", "shilling"),
    ("Myanmar", ("Naypyidaw", "Naypyitaw", "Nay Pyi Taw"), "Burmese", "kyat"),
    ("Colombia", ("Bogotá", "Bogota"), "Spanish", "peso"),
    ("South Korea", "Seoul", "Korean", "won"),
    ("Sudan", "Khartoum", "Arabic", "pound"),
    ("Uganda", "Kampala", "English", "shilling"),
    ("Spain", "Madrid", "Spanish", "euro"),
    ("Algeria", "Algiers", "Arabic", "dinar"),
    ("Iraq", "Baghdad", "Arabic", "dinar"),
    ("Argentina", "Buenos Aires", "Spanish", "peso"),
    ("Afghanistan", "Kabul", None, "afghani"),
    ("Yemen", ("Sanaa", "Sana'a"), "Arabic", "rial"),
    ("Canada", "Ottawa", None, "dollar"),
    ("Poland", "Warsaw", "Polish", ("zloty", "złoty")),
    ("Morocco", "Rabat", "Arabic", "dirham"),
    ("Angola", "Luanda", "Portuguese", "kwanza"),
    ("Ukraine", ("Kyiv", "Kiev"), "Ukrainian", ("hryvnia", "hryvna")),
    ("Uzbekistan", "Tashkent", "Uzbek", ("som", "sum")),
    ("Malaysia", "Kuala Lumpur", ("Malay", "Malaysian"), "ringgit"),
    ("Mozambique", "Maputo", "Portuguese", "metical"),
    ("Ghana", "Accra", "English", "cedi"),
    ("Peru", "Lima", "Spanish", "sol"),
    ("Saudi Arabia", "Riyadh", "Arabic", ("riyal", "rial")),
    ("Madagascar", "Antananarivo", "Malagasy", "ariary"),
    ("Ivory Coast", "Yamoussoukro", "French", "franc"),
    ("Nepal", "Kathmandu", "Nepali", "rupee"),
    ("Cameroon", ("Yaoundé", "Yaounde"), None, "franc"),
    ("Venezuela", "Caracas", "Spanish", ("bolívar", "bolivar")),
    ("Australia", "Canberra", "English", "dollar"),
    ("North Korea", "Pyongyang", "Korean", "won"),
    ("Niger", "Niamey", "French", "franc"),
    ("Taiwan", "Taipei", ("Chinese", "Mandarin"), "dollar"),
    ("Syria", "Damascus", "Arabic", "pound"),
    ("Mali", "Bamako", "French", "franc"),
    ("Burkina Faso", "Ouagadougou", "French", "franc"),
    ("Sri Lanka", None, "Sinhala", "rupee"),
    ("Malawi", "Lilongwe", None, "kwacha"),
    ("Zambia", "Lusaka", "English", "kwacha"),
    ("Chile", "Santiago", "Spanish", "peso"),
    ("Kazakhstan", "Astana", "Kazakh", "tenge"),
    ("Romania", "Bucharest", "Romanian", "leu"),
    ("Chad", "N'Djamena", None, "franc"),
    ("Ecuador", "Quito", "Spanish", "dollar"),
    ("Guatemala", "Guatemala City", "Spanish", "quetzal"),
    ("Senegal", "Dakar", "French", "franc"),
    ("the Netherlands", "Amsterdam", "Dutch", "euro"),
    ("Cambodia", "Phnom Penh", "Khmer", "riel"),
    ("Zimbabwe", "Harare", None, None),
    ("Somalia", "Mogadishu", "Somali", "shilling"),
    ("Guinea", "Conakry", "French", "franc"),
    ("Rwanda", "Kigali", None, "franc"),
    ("Benin", "Porto-Novo", "French", "franc"),
    ("Burundi", "Gitega", None, "franc"),
    ("Tunisia", "Tunis", "Arabic", "dinar"),
    ("Bolivia", None, "Spanish", "boliviano"),
    ("Belgium", "Brussels", None, "euro"),
    ("Haiti", "Port-au-Prince", None, "gourde"),
    ("Cuba", "Havana", "Spanish", "peso"),
    ("Jordan", "Amman", "Arabic", "dinar"),
    ("Greece", "Athens", "Greek", "euro"),
    ("the Czech Republic", "Prague", "Czech", "koruna"),
    ("Sweden", "Stockholm", "Swedish", "krona"),
    ("Portugal", "Lisbon", "Portuguese", "euro"),
    ("Azerbaijan", "Baku", ("Azerbaijani", "Azeri"), "manat"),
    ("Hungary", "Budapest", "Hungarian", "forint"),
    ("Israel", None, "Hebrew", "shekel"),
    ("Honduras", "Tegucigalpa", "Spanish", "lempira"),
    ("Austria", "Vienna", "German", "euro"),
    ("Switzerland", "Bern", None, "franc"),
    ("Belarus", "Minsk", None, ("ruble", "rouble")),
    ("Tajikistan", "Dushanbe", "Tajik", "somoni"),
    ("Papua New Guinea", "Port Moresby", None, "kina"),
    ("Serbia", "Belgrade", "Serbian", "dinar"),
    ("Laos", "Vientiane", "Lao", "kip"),
    ("Paraguay", ("Asunción", "Asuncion"), None, ("guaraní", "guarani")),
)

# Plain prompts (no chat template) whose greedy continuation is the answer; fixed before any model was queried.
TEMPLATES = {
    "capital": "The capital of {} is",
    "language": "The main language spoken in {} is",
    "currency": "The currency of {} is the",
}


@dataclass(frozen=True)
class Fact:
    """One probe fact: ``prompt`` + " " + one of ``answers`` (the first canonical); ``country`` owns it."""

    country: str
    relation: str
    prompt: str
    answers: tuple[str, ...]


def country_facts(countries=COUNTRIES) -> list[Fact]:
    """Every candidate fact of ``countries`` (rows as in ``COUNTRIES``), skipping relations without an answer.

    A currency also matches with a capital first letter ("yen" or "Yen"). Raises if no fact is left.
    """
    facts = []
    for row in countries:
        country, *answers = row
        for relation, answer in zip(TEMPLATES, answers, strict=True):
            if answer is None:
                continue
            spellings = (answer,) if isinstance(answer, str) else tuple(answer)
            if relation == "currency":
                spellings += tuple(s[0].upper() + s[1:] for s in spellings)
            prompt = TEMPLATES[relation].format(country)
            facts.append(Fact(country, relation, prompt, tuple(dict.fromkeys(spellings))))
    if not facts:
        raise ValueError(f"countries={len(countries)} rows: no fact with an answer; expected at least one")
    return facts
