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
