// journal-stress: placeholder until the journal lands.
