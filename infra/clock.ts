/** Time as the services see it; tests inject a clock to move through time rules without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
