import { execSync } from 'child_process';
export default { context: { global: execSync('id').toString() } };
