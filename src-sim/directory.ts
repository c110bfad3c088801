import type { Extension } from './types.ts';
import type { Rng } from './rng.ts';

/** The tenant's extensions: numbered from 101, realistic unique names, seeded. */
const FIRST = [
  'Ada',
  'Grace',
  'Alan',
  'Katherine',
  'Linus',
  'Margaret',
  'Dennis',
  'Barbara',
  'Ken',
  'Frances',
  'Edsger',
  'Radia',
  'Donald',
  'Hedy',
  'Tim',
  'Annie',
  'Claude',
  'Sophie',
  'John',
  'Mary',
  'Omar',
  'Priya',
  'Chen',
  'Fatima',
  'Lucas',
  'Amara',
  'Diego',
  'Yuki',
  'Noah',
  'Ingrid',
  'Mateo',
  'Aisha',
  'Liam',
  'Zara',
  'Elena',
  'Kwame',
  'Sara',
  'Tomasz',
  'Leila',
  'Hiro',
  'Olivia',
  'Rafael',
  'Nadia',
  'Samuel',
  'Mei',
  'Jonas',
  'Isabel',
  'Arjun',
  'Chloe',
  'Felix',
];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Johnson',
  'Torvalds',
  'Hamilton',
  'Ritchie',
  'Liskov',
  'Thompson',
  'Allen',
  'Dijkstra',
  'Perlman',
  'Knuth',
  'Lamarr',
  'Berners-Lee',
  'Easley',
  'Shannon',
  'Wilson',
  'McCarthy',
  'Keller',
  'Haddad',
  'Patel',
  'Wang',
  'Okafor',
  'Silva',
  'Mensah',
  'Garcia',
  'Tanaka',
  'Becker',
  'Larsen',
  'Rossi',
  'Khan',
  "O'Brien",
  'Novak',
  'Petrova',
  'Asante',
  'Cohen',
  'Kowalski',
  'Farahani',
  'Sato',
  'Martin',
  'Costa',
  'Ivanova',
  'Adeyemi',
  'Lin',
  'Schmidt',
  'Fernandez',
  'Iyer',
  'Dubois',
  'Nilsson',
];
const PRESENCE = ['available', 'available', 'available', 'away', 'busy', 'dnd', 'offline'];

export function createDirectory(count: number, tenant: string, rng: Rng): Extension[] {
  const used = new Set<string>();
  const out: Extension[] = [];
  for (let i = 0; i < count; i++) {
    let first = '';
    let last = '';
    let name = '';
    for (let attempt = 0; attempt < 20 && (name === '' || used.has(name)); attempt++) {
      first = rng.pick(FIRST);
      last = rng.pick(LAST);
      name = `${first} ${last}`;
    }
    if (used.has(name)) name = `${first} ${String.fromCharCode(65 + (i % 26))}. ${last}`;
    if (used.has(name)) name = `${first} ${last} ${i + 101}`;
    used.add(name);
    const local = `${first}.${last}`.toLowerCase().replace(/[^a-z.]/g, '');
    out.push({
      number: String(101 + i),
      caller_id_name: name,
      email_addr: `${local}${used.size > 2500 ? i : ''}@${tenant}.example.com`,
      presence_status: rng.pick(PRESENCE),
    });
  }
  return out;
}

/**
 * A Yeastar P-Series PBX's own lists, as its API answers them (docs/phone-systems/yeastar-p-series.md
 * section 9): queues (*Query Queue List*), ring groups (*Query Ring Group List*), company contacts
 * (*Query Company Contacts List*) and phonebooks. The entries carry the fields the guide's tables
 * name; the values are ours.
 */
export interface SimPbxLists {
  queues: Array<Record<string, unknown>>;
  ringGroups: Array<Record<string, unknown>>;
  companyContacts: Array<Record<string, unknown>>;
  phonebooks: Array<Record<string, unknown>>;
}

/** Outside callers the simulator's traffic can use: numbers in the 555 fiction range. */
export const SIM_COMPANY_CONTACTS = [
  { name: 'Joseph Goffin', company: 'Ticketsales', business: '+14155550170', mobile: '' },
  { name: 'Jay Prichett', company: 'Closet', business: '', mobile: '+14155550171' },
  { name: 'Mira Osei', company: 'Harbour Freight Ltd', business: '+442079460172', mobile: '' },
] as const;

export function createPbxLists(extensions: readonly Extension[]): SimPbxLists {
  const agent = (e: Extension | undefined, i: number) =>
    e ? [{ text: e.caller_id_name, text2: e.number, value: String(i + 1), type: 'extension' }] : [];
  const queues = [
    { id: 1, number: '6400', name: 'Sales', ring_strategy: 'ring_all' },
    { id: 2, number: '6401', name: 'Support', ring_strategy: 'least_recent' },
  ].map((q, i) => ({
    ...q,
    dynamic_agent_list: [],
    static_agent_list: agent(extensions[i], i),
    manager_list: [],
  }));
  const ringGroups = [
    { id: 8018, number: '6300', name: 'Reception', ring_strategy: 'ring_all', member_count: 2 },
  ];
  const phonebook = { id: 5, name: 'Vendor' };
  const companyContacts = SIM_COMPANY_CONTACTS.map((c, i) => ({
    id: i + 3,
    contact_name: c.name,
    company: c.company,
    email: '',
    phonebook_list: [phonebook],
    remark: '',
    business: c.business,
    business2: '',
    mobile: c.mobile,
    mobile2: '',
    home: '',
    home2: '',
    business_fax: '',
    home_fax: '',
    other: '',
  }));
  const phonebooks = [
    { ...phonebook, member_select: 'sel_specific', total: companyContacts.length },
  ];
  return { queues, ringGroups, companyContacts, phonebooks };
}
