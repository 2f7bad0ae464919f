import t from 'tap'
import { derivedStatuses, OperationIds, routeFacts } from '../../../lib/http/openapi-contract.js'

t.test('operation ids: the platform\'s names, made ones otherwise, unique and stable', async (t) => {
  const ids = new OperationIds()
  t.equal(ids.idFor('GET', '/studio/component-groups/'), 'getComponentGroups')
  t.equal(ids.idFor('put', '/studio/component-groups/:id'), 'updateComponentGroup')
  t.equal(ids.idFor('POST', '/orchestrator_manager/restAction/:adapterId'), 'restAction')
  t.equal(ids.idFor('GET', '/configuration_manager/ismaintenance'), 'isMaintenance')
  t.equal(ids.idFor('GET', '/whoami'), 'getWhoami')
  t.equal(ids.idFor('POST', '/git/:gitType/repos/:repoPath/branches/:branchName'), 'postReposBranches')
  t.equal(ids.idFor('POST', '/git/:gitType/repos/:repoPath/branches'), 'postReposBranchesByRepoPath', 'a clash is told apart by the last parameter')
  t.equal(ids.idFor('POST', '/git/:gitType/repos/:repoPath/branches'), 'postReposBranchesByRepoPath', 'the same route keeps its id')
  t.equal(ids.idFor('POST', '/git/:gitType/repos/:other/branches'), 'postReposBranchesByOther')
  t.equal(ids.idFor('POST', '/git/:gitType/repos/:repoPath/branches/'), 'postReposBranches2', 'then by a number')
})

t.test('statuses from a route\'s configuration', async (t) => {
  const facts = (over: Partial<Parameters<typeof routeFacts>[0]>) => routeFacts({ method: 'GET', url: '/x', secured: false, ...over })
  t.same(derivedStatuses(facts({})), [400, 503])
  t.same(derivedStatuses(facts({ neverShed: true })), [400])
  t.same(derivedStatuses(facts({ method: 'POST', secured: true })), [400, 401, 403, 413, 415, 429, 503])
  t.same(derivedStatuses(facts({ method: 'DELETE', url: '/x/:id', secured: true })), [400, 401, 403, 413, 414, 415, 429, 503])
  t.same(derivedStatuses(facts({ method: 'GET', secured: true })), [400, 401, 429, 503], 'a read: no cross-origin refusal')
  t.same(derivedStatuses(facts({ method: 'GET', secured: true, changesState: true })), [400, 401, 403, 429, 503], 'a GET that changes state is a write')
  t.same(derivedStatuses(facts({ method: 'POST', ownErrors: true })), [], 'a route with errors of its own shape declares them itself')
})
