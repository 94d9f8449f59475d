// The sentences the translator benchmarks time, in one place so their figures stay comparable:
// the 10-word one is issue 14's benchmark sentence (translate_latency.mjs's 7.6 ms then), the
// 20-word one its longer twin.
export const benchSentences = {
  'fra-eng': {
    10: 'Je pense que nous devrions partir avant la nuit tombée.',
    20: 'Je pense que nous devrions partir avant la nuit tombée parce que la route de la montagne est très dangereuse.',
  },
  'eng-fra': { 10: 'I think that we should leave before it gets dark.' },
};
